package compat

import (
	"regexp"
	"strconv"
	"strings"
)

// Incomplete dates: the zero date '0000-00-00' and a date with a zero
// month or day ('2020-00-15', '2020-03-00'), with or without a time of
// day. MySQL keeps them apart from real dates: functions that take a
// date apart read them as they are written (Item_func::get_arg0_date
// with TIME_FUZZY_DATE: YEAR, MONTH, DAY, QUARTER, MONTHNAME,
// DATE_FORMAT, EXTRACT; the functions of a TIME read the time of day of
// '0000-00-00 10:11:12'), the others refuse them. GMS has no such value:
// it reads the zero date as 0000-01-01 and fails on the others, so
// MONTH('2020-00-15') was NULL (MySQL 0, documented: "Returns 0 for
// dates such as '0000-00-00' or '2008-00-00' that have a zero month
// part") and DATE_FORMAT('0000-00-00', '%Y-%m-%d') '0000-01-01'.

// fuzzyDate is the fields of a date as written, zero month and day
// allowed, and its time of day.
type fuzzyDate struct {
	year, month, day             int
	hour, minute, second, micros int
	// hasTime: the value was written with a time of day.
	hasTime bool
}

// fuzzyDatetime is a date with a zero part as text: the date, then
// optionally a time of day and its fraction.
var fuzzyDatetime = regexp.MustCompile(`^\s*([0-9]{1,4})[-/.:]([0-9]{1,2})[-/.:]([0-9]{1,2})(?:[ T]+([0-9]{1,2}):([0-9]{1,2}):([0-9]{1,2})(?:\.([0-9]{1,6})[0-9]*)?)?\s*$`)

// parseFuzzyDate reads s as a date with a zero month or day (or the
// zero date); ok false for anything else, a complete date among them
// (GMS reads those).
func parseFuzzyDate(s string) (p fuzzyDate, ok bool) {
	m := fuzzyDatetime.FindStringSubmatch(s)
	if m == nil {
		return p, false
	}
	n := func(i int) int {
		v, _ := strconv.Atoi(m[i])
		return v
	}
	p = fuzzyDate{year: n(1), month: n(2), day: n(3)}
	if p.month > 12 || p.day > 31 || p.month != 0 && p.day != 0 {
		return p, false
	}
	if m[4] != "" {
		p.hasTime = true
		p.hour, p.minute, p.second = n(4), n(5), n(6)
		if p.hour > 23 || p.minute > 59 || p.second > 59 {
			return p, false
		}
		if frac := m[7]; frac != "" {
			p.micros, _ = strconv.Atoi(frac + strings.Repeat("0", 6-len(frac)))
		}
	}
	return p, true
}

// fuzzyDateOfValue is parseFuzzyDate of a string or []byte value.
func fuzzyDateOfValue(v any) (fuzzyDate, bool) {
	switch x := v.(type) {
	case string:
		return parseFuzzyDate(x)
	case []byte:
		return parseFuzzyDate(string(x))
	}
	return fuzzyDate{}, false
}

// fuzzyDayNumber is MySQL's calc_daynr of a date whose day may be zero
// (morefuncs.go's dayNumber), 0 for a zero year and month.
func fuzzyDayNumber(year, month, day int) int {
	if year == 0 && month == 0 {
		return 0
	}
	return int(dayNumber(int64(year), int64(month), int64(day)))
}

// weekdayOf is the weekday of a day number, Monday 0.
func weekdayOf(daynr int) int { return (daynr + 5) % 7 }

// monthNames and dayNames are DATE_FORMAT's English names.
var (
	monthNames = [...]string{"January", "February", "March", "April", "May", "June", "July",
		"August", "September", "October", "November", "December"}
	dayNames = [...]string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
)

// format is DATE_FORMAT(p, f) as MySQL's make_date_time writes an
// incomplete date; ok false (NULL) where MySQL has no answer: a month
// name of month 0, a weekday or day of the year of a date with month 0.
// The week specifiers (%U %u %V %v %X %x), whose MySQL answers for an
// incomplete date come from unsigned arithmetic running below zero, are
// NULL too (docs/compatibility.md).
func (p fuzzyDate) format(f string) (string, bool) {
	var b strings.Builder
	pad := func(v, width int) {
		s := strconv.Itoa(v)
		for i := len(s); i < width; i++ {
			b.WriteByte('0')
		}
		b.WriteString(s)
	}
	// clock writes hh:mm:ss of the hour h.
	clock := func(h int) {
		pad(h, 2)
		b.WriteByte(':')
		pad(p.minute, 2)
		b.WriteByte(':')
		pad(p.second, 2)
	}
	hour12 := (p.hour+11)%12 + 1
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c != '%' || i+1 == len(f) {
			b.WriteByte(c)
			continue
		}
		i++
		switch f[i] {
		case 'M', 'b':
			if p.month == 0 {
				return "", false
			}
			name := monthNames[p.month-1]
			if f[i] == 'b' {
				name = name[:3]
			}
			b.WriteString(name)
		case 'W', 'a', 'w', 'j':
			if p.month == 0 {
				return "", false
			}
			daynr := fuzzyDayNumber(p.year, p.month, p.day)
			switch f[i] {
			case 'W':
				b.WriteString(dayNames[weekdayOf(daynr)])
			case 'a':
				b.WriteString(dayNames[weekdayOf(daynr)][:3])
			case 'w':
				pad((weekdayOf(daynr)+1)%7, 1)
			case 'j':
				pad(daynr-fuzzyDayNumber(p.year, 1, 1)+1, 3)
			}
		case 'U', 'u', 'V', 'v', 'X', 'x':
			return "", false
		case 'D':
			pad(p.day, 1)
			switch {
			case p.day >= 10 && p.day <= 19:
				b.WriteString("th")
			case p.day%10 == 1:
				b.WriteString("st")
			case p.day%10 == 2:
				b.WriteString("nd")
			case p.day%10 == 3:
				b.WriteString("rd")
			default:
				b.WriteString("th")
			}
		case 'Y':
			pad(p.year, 4)
		case 'y':
			pad(p.year%100, 2)
		case 'm':
			pad(p.month, 2)
		case 'c':
			pad(p.month, 1)
		case 'd':
			pad(p.day, 2)
		case 'e':
			pad(p.day, 1)
		case 'f':
			pad(p.micros, 6)
		case 'H':
			pad(p.hour, 2)
		case 'k':
			pad(p.hour, 1)
		case 'h', 'I':
			pad(hour12, 2)
		case 'l':
			pad(hour12, 1)
		case 'i':
			pad(p.minute, 2)
		case 'S', 's':
			pad(p.second, 2)
		case 'p':
			b.WriteString(amPM(p.hour))
		case 'r':
			clock(hour12)
			b.WriteByte(' ')
			b.WriteString(amPM(p.hour))
		case 'T':
			clock(p.hour)
		default:
			b.WriteByte(f[i])
		}
	}
	return b.String(), true
}

// amPM is %p of an hour.
func amPM(hour int) string {
	if hour%24 < 12 {
		return "AM"
	}
	return "PM"
}

// extract is EXTRACT(unit FROM p) (unit in upper case); ok false for a
// unit MySQL answers through a week number (WEEK), NULL here as in
// format.
func (p fuzzyDate) extract(unit string) (int64, bool) {
	y, mo, d := int64(p.year), int64(p.month), int64(p.day)
	h, mi, s, us := int64(p.hour), int64(p.minute), int64(p.second), int64(p.micros)
	switch strings.ToUpper(strings.TrimSpace(unit)) {
	case "YEAR":
		return y, true
	case "QUARTER":
		return (mo + 2) / 3, true
	case "MONTH":
		return mo, true
	case "DAY":
		return d, true
	case "HOUR":
		return h, true
	case "MINUTE":
		return mi, true
	case "SECOND":
		return s, true
	case "MICROSECOND":
		return us, true
	case "YEAR_MONTH":
		return y*100 + mo, true
	case "DAY_HOUR":
		return d*100 + h, true
	case "DAY_MINUTE":
		return (d*100+h)*100 + mi, true
	case "DAY_SECOND":
		return ((d*100+h)*100+mi)*100 + s, true
	case "DAY_MICROSECOND":
		return (((d*100+h)*100+mi)*100+s)*1_000_000 + us, true
	case "HOUR_MINUTE":
		return h*100 + mi, true
	case "HOUR_SECOND":
		return (h*100+mi)*100 + s, true
	case "HOUR_MICROSECOND":
		return ((h*100+mi)*100+s)*1_000_000 + us, true
	case "MINUTE_SECOND":
		return mi*100 + s, true
	case "MINUTE_MICROSECOND":
		return (mi*100+s)*1_000_000 + us, true
	case "SECOND_MICROSECOND":
		return s*1_000_000 + us, true
	}
	return 0, false
}
