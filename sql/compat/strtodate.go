package compat

import (
	"strings"
	"time"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// STR_TO_DATE as MySQL reads its string (extract_date_time in MySQL's
// item_timefunc.cc, as its manual describes it). GMS's parser
// (planbuilder/dateparse) builds its answer with time.Date, which
// normalizes what is out of range: STR_TO_DATE('2020-02-30', '%Y-%m-%d')
// was 2020-03-01 and STR_TO_DATE('2020', '%Y') 2019-11-30, where MySQL
// answers NULL with warning 1411 (Incorrect datetime value: '...' for
// function str_to_date). percdb reads each field itself, checks the
// date as MySQL's check_date does under the session's sql_mode
// (NO_ZERO_IN_DATE, NO_ZERO_DATE) and warns as MySQL does: 1411 for a
// string that does not match or is no valid date, 1292 (Truncated
// incorrect datetime value) for text left after the format.
//
// A DATE with a zero month or day is valid in MySQL without
// NO_ZERO_IN_DATE ('2020-00-10'), but GMS has no value for it (a
// time.Time): percdb answers NULL with the warning there, and a date
// with a day past its month's end (ALLOW_INVALID_DATES) likewise.

// strToDateFunction is percdb's STR_TO_DATE.
var strToDateFunction = gsql.Function2{Name: "str_to_date", Fn: func(s, f gsql.Expression) gsql.Expression {
	return newTemporalFunc("str_to_date", strToDate, strToDateType, s, f)
}}

// dateSpecifierSet and timeSpecifierSet are the specifiers of a format
// that read a date's and a time's fields (MySQL's
// get_date_time_result_type). The day of the month (%d, %e, %D) is
// neither: it is also a TIME's days, STR_TO_DATE('1 10:00', '%d %H:%i')
// is the TIME 34:00:00. They are not changed after the package is
// initialized.
var (
	dateSpecifierSet = "abcjMmUuVvWwXxYy"
	timeSpecifierSet = "fHhIiklprSsT"
)

// strToDateType is STR_TO_DATE's type: for a constant format DATE,
// TIME or DATETIME by the fields it reads (with six digits when it reads
// %f), else DATETIME(6), as MySQL's.
func strToDateType(args []gsql.Expression) gsql.Type {
	lit, ok := args[1].(*expression.Literal)
	if !ok {
		return types.DatetimeMaxPrecision
	}
	v, err := lit.Eval(nil, nil)
	if err != nil || v == nil {
		return types.DatetimeMaxPrecision
	}
	format, ok := v.(string)
	if !ok {
		return types.DatetimeMaxPrecision
	}
	hasDate, hasTime, frac := formatFields(format)
	switch {
	case hasDate && !hasTime:
		return types.Date
	case hasTime && !hasDate:
		return types.Time
	case frac:
		return types.DatetimeMaxPrecision
	}
	return types.Datetime
}

// formatFields reports whether format reads date fields, time fields
// and a fraction of a second.
func formatFields(format string) (hasDate, hasTime, frac bool) {
	for i := 0; i+1 < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		c := format[i]
		hasDate = hasDate || strings.IndexByte(dateSpecifierSet, c) >= 0
		hasTime = hasTime || strings.IndexByte(timeSpecifierSet, c) >= 0
		frac = frac || c == 'f'
	}
	return hasDate, hasTime, frac
}

// strToDate evaluates STR_TO_DATE of its arguments' values.
func strToDate(ctx *gsql.Context, vals []any, args []gsql.Expression) (any, error) {
	str, err := valueText(ctx, args[0].Type(), vals[0]) // groupconcat.go
	if err != nil {
		return nil, err
	}
	format, err := valueText(ctx, args[1].Type(), vals[1])
	if err != nil {
		return nil, err
	}
	fail := func() (any, error) {
		ctx.Warn(1411, "Incorrect datetime value: '%s' for function str_to_date", str)
		return nil, nil
	}
	d := parsedDate{week: -1, wkYear: -1}
	rest, ok := d.parse(str, format)
	if !ok || !d.finish() {
		return fail()
	}
	typ := strToDateType(args)
	// Text left after the format is warned of once the answer is not
	// NULL, by the name of the answer's type.
	truncated := func() {
		if strings.TrimLeft(rest, " \t\n\r\v\f") == "" {
			return
		}
		name := "datetime"
		switch {
		case isTimeType(typ):
			name = "time"
		case types.IsDateType(typ):
			name = "date"
		}
		ctx.Warn(1292, "Truncated incorrect %s value: '%s'", name, str)
	}
	if isTimeType(typ) {
		// A TIME: the days read are hours more (MySQL's
		// Item_func_str_to_date::val_datetime).
		us := ((int64(d.day)*24+int64(d.hour))*3600+int64(d.minute)*60+int64(d.second))*1e6 + int64(d.micro)
		truncated()
		return types.Time.MicrosecondsToTimespan(us), nil
	}
	mode := gsql.LoadSqlMode(ctx)
	zero := d.year == 0 && d.month == 0 && d.day == 0
	switch {
	case zero && mode.ModeEnabled("NO_ZERO_DATE"):
		return fail()
	case zero:
		truncated()
		return types.Datetime.Zero(), nil
	case d.month == 0 || d.day == 0:
		// MySQL's value without NO_ZERO_IN_DATE has no time.Time.
		return fail()
	case d.day > strToDateMonthDays(d.year, d.month):
		return fail()
	}
	truncated()
	return time.Date(d.year, time.Month(d.month), d.day, d.hour, d.minute, d.second, d.micro*1000, time.UTC), nil
}

// strToDateMonthDays returns the number of days of month in year
// (MySQL's year 0 is no leap year).
func strToDateMonthDays(year, month int) int {
	if month == 2 && year == 0 {
		return 28
	}
	return daysIn(time.Month(month), year) // dateshift.go
}

// parsedDate holds the fields STR_TO_DATE reads, before they are
// checked.
type parsedDate struct {
	year, month, day, hour, minute, second, micro int

	usaTime  bool // a 12-hour field was read (%h, %I, %l, %r)
	pm       bool
	yearDay  int // %j, 0 when not read
	weekday  int // 1 (Monday) to 7 (Sunday), 0 when not read
	week     int // %U %u %V %v, -1 when not read
	sundayWk bool
	strictWk bool
	wkYear   int // %X %x, -1 when not read
	wkYearX  bool
}

// englishMonths and englishDays are the names %M, %b, %W and %a read.
// They are not changed after the package is initialized.
var (
	englishMonths = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
	englishDays   = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// parse reads s by format into d and returns what is left of s, and
// false when s does not match format. A space in format matches
// nothing (spaces in s are skipped before each field), and reading
// stops when s ends, whatever is left of format.
func (d *parsedDate) parse(s, format string) (string, bool) {
	for i := 0; i < len(format); i++ {
		s = strings.TrimLeft(s, " \t\n\r\v\f")
		if s == "" {
			break
		}
		c := format[i]
		if c != '%' || i+1 == len(format) {
			if isSpace(c) {
				continue
			}
			if s[0] != c {
				return s, false
			}
			s = s[1:]
			continue
		}
		i++
		var ok bool
		switch spec := format[i]; spec {
		case 'Y':
			before := s
			d.year, s, ok = digitsField(s, 4)
			if len(before)-len(s) <= 2 {
				// Two digits are a two-digit year, as %y's.
				d.year = year2000(d.year)
			}
		case 'y':
			d.year, s, ok = digitsField(s, 2)
			d.year = year2000(d.year)
		case 'm', 'c':
			d.month, s, ok = digitsField(s, 2)
		case 'M':
			d.month, s, ok = wordField(s, englishMonths, false)
		case 'b':
			d.month, s, ok = wordField(s, englishMonths, true)
		case 'd', 'e':
			d.day, s, ok = digitsField(s, 2)
		case 'D':
			d.day, s, ok = digitsField(s, 2)
			s = s[min(2, len(s)):] // st, nd, rd, th
		case 'h', 'I', 'l':
			d.usaTime = true
			d.hour, s, ok = digitsField(s, 2)
		case 'H', 'k':
			d.hour, s, ok = digitsField(s, 2)
		case 'i':
			d.minute, s, ok = digitsField(s, 2)
		case 's', 'S':
			d.second, s, ok = digitsField(s, 2)
		case 'f':
			n, rest, good := digitsField(s, 6)
			for w := len(s) - len(rest); w < 6; w++ {
				n *= 10
			}
			d.micro, s, ok = n, rest, good
		case 'p':
			if len(s) < 2 || !d.usaTime {
				return s, false
			}
			switch strings.ToUpper(s[:2]) {
			case "PM":
				d.pm = true
			case "AM":
			default:
				return s, false
			}
			s, ok = s[2:], true
		case 'W':
			d.weekday, s, ok = wordField(s, englishDays, false)
		case 'a':
			d.weekday, s, ok = wordField(s, englishDays, true)
		case 'w':
			var n int
			n, s, ok = digitsField(s, 1)
			if n > 6 {
				return s, false
			}
			d.weekday = n
			if n == 0 {
				d.weekday = 7
			}
		case 'j':
			d.yearDay, s, ok = digitsField(s, 3)
		case 'U', 'u', 'V', 'v':
			d.sundayWk = spec == 'U' || spec == 'V'
			d.strictWk = spec == 'V' || spec == 'v'
			d.week, s, ok = digitsField(s, 2)
			if d.week > 53 || d.strictWk && d.week == 0 {
				return s, false
			}
		case 'X', 'x':
			d.wkYearX = spec == 'X'
			d.wkYear, s, ok = digitsField(s, 4)
		case 'r':
			s, ok = d.parse(s, "%I:%i:%S %p")
		case 'T':
			s, ok = d.parse(s, "%H:%i:%S")
		case '.':
			s, ok = strings.TrimLeftFunc(s, func(r rune) bool { return r < 128 && isPunct(byte(r)) }), true
		case '@':
			s, ok = strings.TrimLeftFunc(s, func(r rune) bool { return r < 128 && isAlpha(byte(r)) }), true
		case '#':
			s, ok = strings.TrimLeftFunc(s, func(r rune) bool { return r >= '0' && r <= '9' }), true
		}
		if !ok {
			return s, false
		}
	}
	return s, true
}

// year2000 is MySQL's year of a two-digit year: 70 to 99 are 1970 to
// 1999, 0 to 69 2000 to 2069.
func year2000(y int) int {
	switch {
	case y < 70:
		return y + 2000
	case y < 100:
		return y + 1900
	}
	return y
}

// digitsField reads a number of at most n digits from the start of s.
func digitsField(s string, n int) (int, string, bool) {
	v, i := 0, 0
	for i < len(s) && i < n && s[i] >= '0' && s[i] <= '9' {
		v = v*10 + int(s[i]-'0')
		i++
	}
	return v, s[i:], i > 0
}

// wordField reads one of names (or its first three letters, when abbr),
// in any case, from the start of s; its number counts from 1.
func wordField(s string, names []string, abbr bool) (int, string, bool) {
	for i, n := range names {
		if abbr {
			n = n[:3]
		}
		if len(s) >= len(n) && strings.EqualFold(s[:len(n)], n) {
			return i + 1, s[len(n):], true
		}
	}
	return 0, s, false
}

// isSpace, isPunct and isAlpha are the ASCII character classes of
// MySQL's my_isspace, my_ispunct and my_isalpha.
func isSpace(c byte) bool { return c == ' ' || c >= '\t' && c <= '\r' }
func isPunct(c byte) bool {
	return c > ' ' && c < 127 && !isAlpha(c) && (c < '0' || c > '9')
}
func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// finish applies the 12-hour clock, the day of the year and the week
// fields, and checks each field's range, as MySQL does once a string is
// read; it reports false where MySQL's answer is NULL.
func (d *parsedDate) finish() bool {
	if d.usaTime {
		if d.hour > 12 || d.hour < 1 {
			return false
		}
		d.hour %= 12
		if d.pm {
			d.hour += 12
		}
	}
	if d.yearDay > 0 {
		t := time.Date(d.year, 1, d.yearDay, 0, 0, 0, 0, time.UTC)
		if d.year == 0 || t.Year() > 9999 {
			return false
		}
		d.year, d.month, d.day = t.Year(), int(t.Month()), t.Day()
	}
	if d.week >= 0 && d.weekday > 0 {
		if d.strictWk && (d.wkYear < 0 || d.wkYearX != d.sundayWk) || !d.strictWk && d.wkYear >= 0 {
			return false
		}
		year := d.year
		if d.strictWk {
			year = d.wkYear
		}
		if year == 0 {
			return false
		}
		jan1 := time.Date(year, 1, 1, 0, 0, 0, 0, time.UTC)
		var days int
		if d.sundayWk {
			wb := int(jan1.Weekday()) // Sunday 0
			if wb != 0 {
				days = 7
			}
			days += -wb + (d.week-1)*7 + d.weekday%7
		} else {
			wb := (int(jan1.Weekday()) + 6) % 7 // Monday 0
			if wb > 3 {
				days = 7
			}
			days += -wb + (d.week-1)*7 + d.weekday - 1
		}
		t := jan1.AddDate(0, 0, days)
		if t.Year() < 1 || t.Year() > 9999 {
			return false
		}
		d.year, d.month, d.day = t.Year(), int(t.Month()), t.Day()
	}
	return d.month <= 12 && d.day <= 31 && d.hour <= 23 && d.minute <= 59 && d.second <= 59
}
