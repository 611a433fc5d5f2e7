package compat

import (
	"fmt"
	"strconv"
	"strings"
)

// MySQL's typed literals DATE 'str', TIME 'str' and TIMESTAMP 'str' are
// values of their types: DATE'2020-01-01' + 1 is 20200102,
// TIMESTAMP'2020-01-01 10:00:00.25' + 0 20200101100000.25 (a DATETIME
// of as many fractional digits as written), TIME'10:00:00' + 1 100001,
// and DATE'2020-01-01' = 20200101 is true. The vitess grammar GMS
// parses with reads the keyword and drops it (NewStrVal), so they were
// strings: 2020 with warning 1292 in arithmetic, and compared as
// strings. A text that is no value of its type is MySQL's error 1525
// (ER_WRONG_VALUE, create_temporal_literal), which GMS never gave.
//
// typedLiterals finds them in a statement's text before it is parsed
// and writes each as CAST('canonical text' AS type), the value read as
// MySQL reads the literal (str_to_datetime / str_to_time with no
// warning, and of the literal's kind: a DATE'…' with a time or a
// TIMESTAMP'…' without one is 1525). The select items keep the names
// the client wrote (syntaxFix.restoreNames). A statement without a
// quote after one of the three words is not scanned further
// (mayHaveTypedLiteral), so ordinary statements pay one pass over
// their bytes.

// N'...' and n'...' (no space between) are strings in the national
// character set, which MySQL 8 defines as utf8mb3; the vitess grammar
// refuses them (1064), or reads N as a column and the string as its
// alias (SELECT N'a' was 1054). typedLiterals writes them as
// _utf8mb3'...', which the grammar takes.

// nationalIntroducer is the introducer an N'...' literal is written
// with.
const nationalIntroducer = "_utf8mb3"

// typedLiteralKinds are the words that type a string after them, by
// upper-case word.
var typedLiteralKinds = map[string]bool{"DATE": true, "TIME": true, "TIMESTAMP": true}

// errWrongTemporalLiteral is MySQL's 1525 for a typed literal of kind
// (DATE, TIME, DATETIME) whose text s is no such value. GMS wraps a
// parser's error, so it is a plain error whose message the error
// mapping knows (sql/errors.go).
func errWrongTemporalLiteral(kind, s string) error {
	return fmt.Errorf("Incorrect %s value: '%s'", kind, s)
}

// mayHaveTypedLiteral reports whether a quote in query follows one of
// the words DATE, TIME or TIMESTAMP (spaces between): a quick test,
// which a quote ending a string can pass; typedLiterals decides.
func mayHaveTypedLiteral(query string) bool {
	for i := 1; i < len(query); i++ {
		if c := query[i]; c != '\'' && c != '"' {
			continue
		}
		j := i
		for j > 0 && isSpace(query[j-1]) {
			j--
		}
		k := j
		for k > 0 && isTokenByte(query[k-1]) && j-k < 10 {
			k--
		}
		// The word before the quote, without upper-casing a copy of
		// every word that precedes a quote.
		if w := query[k:j]; strings.EqualFold(w, "DATE") || strings.EqualFold(w, "TIME") || strings.EqualFold(w, "TIMESTAMP") {
			return true
		}
		if query[i] == '\'' && j == i && i-k == 1 && (query[k] == 'N' || query[k] == 'n') {
			return true // N'...'
		}
	}
	return false
}

// typedLiterals returns query with its typed literals written as casts
// (see above), false when it has none, or error 1525 for the first one
// whose text is no value of its type.
func typedLiterals(query string) (*syntaxFix, bool, error) {
	if !mayHaveTypedLiteral(query) {
		return nil, false, nil
	}
	toks := syntaxTokens(query)
	var b strings.Builder
	var orig []int
	last := 0 // the query's bytes before it are written
	// replace writes the query up to start, then with in place of the
	// bytes from start to end (its offsets all start's).
	replace := func(start, end int, with string) {
		b.WriteString(query[last:start])
		for k := last; k < start; k++ {
			orig = append(orig, k)
		}
		b.WriteString(with)
		for range with {
			orig = append(orig, start)
		}
		last = end
	}
	for i, t := range toks {
		if t.word == "N" && t.end < len(query) && query[t.end] == '\'' {
			replace(t.start, t.end, nationalIntroducer) // N'...'
			continue
		}
		if !typedLiteralKinds[t.word] || !notQualified(toks, i) {
			continue
		}
		q := t.end
		for q < len(query) && isSpace(query[q]) {
			q++
		}
		if q >= len(query) || query[q] != '\'' && query[q] != '"' {
			continue
		}
		end := skipQuoted(query, q)
		if i+1 < len(toks) && toks[i+1].start < end {
			continue // not a string after all (a comment's text)
		}
		text, ok := unquoteLiteral(query[q:end])
		if !ok {
			continue
		}
		cast, err := typedLiteralCast(t.word, text)
		if err != nil {
			return nil, false, err
		}
		replace(t.start, end, cast)
	}
	if orig == nil && last == 0 {
		return nil, false, nil
	}
	b.WriteString(query[last:])
	for k := last; k <= len(query); k++ {
		orig = append(orig, k)
	}
	return &syntaxFix{query: query, text: b.String(), orig: orig}, true, nil
}

// unquoteLiteral returns the text of the quoted string s: its doubled
// quotes and backslash escapes read. A typed literal's text is digits
// and punctuation, so only the escapes of those are read; any other is
// not rewritten (false), and stays GMS's string.
func unquoteLiteral(s string) (string, bool) {
	if len(s) < 2 || s[len(s)-1] != s[0] {
		return "", false
	}
	q, body := s[0], s[1:len(s)-1]
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == q && i+1 < len(body) && body[i+1] == q:
			b.WriteByte(c)
			i++
		case c == '\\':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// typedLiteralCast returns the cast a typed literal of word (DATE, TIME,
// TIMESTAMP) and text s is written as, or its error 1525.
func typedLiteralCast(word, s string) (string, error) {
	switch word {
	case "DATE":
		v, ok := readLiteralDatetime(s)
		if !ok || v.hasTime {
			return "", errWrongTemporalLiteral("DATE", s)
		}
		return fmt.Sprintf("CAST('%04d-%02d-%02d' AS DATE)", v.year, v.month, v.day), nil
	case "TIMESTAMP":
		v, ok := readLiteralDatetime(s)
		if !ok || !v.hasTime {
			return "", errWrongTemporalLiteral("DATETIME", s)
		}
		return fmt.Sprintf("CAST('%04d-%02d-%02d %02d:%02d:%02d%s' AS %s)", v.year, v.month, v.day,
			v.hour, v.minute, v.second, v.fraction(), temporalCastType("DATETIME", v.digits)), nil
	default:
		v, ok := readLiteralTime(s)
		if !ok {
			return "", errWrongTemporalLiteral("TIME", s)
		}
		sign := ""
		if v.negative {
			sign = "-"
		}
		return fmt.Sprintf("CAST('%s%02d:%02d:%02d%s' AS %s)", sign, v.hour, v.minute, v.second,
			v.fraction(), temporalCastType("TIME", v.digits)), nil
	}
}

// temporalCastType is the cast's type name of n fractional digits.
func temporalCastType(name string, n int) string {
	if n == 0 {
		return name
	}
	return fmt.Sprintf("%s(%d)", name, n)
}

// literalTemporal is the value of a typed literal's text.
type literalTemporal struct {
	year, month, day     int
	hour, minute, second int
	micro, digits        int // the fraction in microseconds, its digits as written (at most 6)
	hasTime, negative    bool
}

// fraction returns the fraction as the cast's text has it: its digits
// after a point, nothing for none.
func (v literalTemporal) fraction() string {
	if v.digits == 0 {
		return ""
	}
	s := fmt.Sprintf("%06d", v.micro)
	return "." + s[:v.digits]
}

// readFraction reads the digits of a fraction (after its point): the
// microseconds of its first six and how many were written (at most 6).
// MySQL truncates the digits after the sixth for a literal (with no
// warning: TIMESTAMP'… 10:00:00.1234567' is …10:00:00.123456).
func readFraction(s string) (micro, digits int, ok bool) {
	if s == "" || !allDigits(s) {
		return 0, 0, false
	}
	digits = min(len(s), 6)
	f := s[:digits] + strings.Repeat("0", 6-digits)
	micro, _ = strconv.Atoi(f)
	return micro, digits, true
}

// readLiteralDatetime reads s as MySQL's str_to_datetime does for a
// typed literal: YYYY-MM-DD (any punctuation between the fields, one
// or two digits for month and day, two for a year of 1970-2069), or
// the digits YYYYMMDD / YYMMDD, then optionally a time hh:mm[:ss[.f]]
// after a space or a T, or the digits YYYYMMDDhhmmss[.f] /
// YYMMDDhhmmss[.f]. Fields are checked: month 1-12, a day the month
// has, hour 0-23, minute and second 0-59; the zero date 0000-00-00 is
// read as it is.
func readLiteralDatetime(s string) (literalTemporal, bool) {
	var v literalTemporal
	s = strings.TrimSpace(s)
	whole, frac, hasFrac := strings.Cut(s, ".")
	if allDigits(whole) {
		switch len(whole) {
		case 8, 14:
			v.year, _ = strconv.Atoi(whole[:4])
			whole = whole[4:]
		case 6, 12:
			y, _ := strconv.Atoi(whole[:2])
			v.year = year2000(y)
			whole = whole[2:]
		default:
			return v, false
		}
		v.month, _ = strconv.Atoi(whole[:2])
		v.day, _ = strconv.Atoi(whole[2:4])
		if len(whole) > 4 {
			v.hasTime = true
			v.hour, _ = strconv.Atoi(whole[4:6])
			v.minute, _ = strconv.Atoi(whole[6:8])
			v.second, _ = strconv.Atoi(whole[8:10])
		}
		if hasFrac {
			if !v.hasTime {
				return v, false
			}
			var ok bool
			if v.micro, v.digits, ok = readFraction(frac); !ok {
				return v, false
			}
		}
		return v, checkDatetime(v)
	}
	date, clock := s, ""
	if i := strings.IndexAny(s, " T"); i > 0 {
		date, clock = s[:i], strings.TrimLeft(s[i+1:], " ")
	}
	fields := splitDigitRuns(date)
	if len(fields) != 3 || len(fields[0]) > 4 || len(fields[1]) > 2 || len(fields[2]) > 2 {
		return v, false
	}
	v.year, _ = strconv.Atoi(fields[0])
	if len(fields[0]) <= 2 {
		v.year = year2000(v.year)
	}
	v.month, _ = strconv.Atoi(fields[1])
	v.day, _ = strconv.Atoi(fields[2])
	if clock != "" {
		t, ok := readClock(clock, 23)
		if !ok {
			return v, false
		}
		v.hasTime = true
		v.hour, v.minute, v.second, v.micro, v.digits = t.hour, t.minute, t.second, t.micro, t.digits
	}
	return v, checkDatetime(v)
}

// splitDigitRuns returns the runs of digits of s when s is runs of
// digits separated by single punctuation bytes, else nil.
func splitDigitRuns(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			continue
		}
		if i == start || i < len(s) && !isPunct(s[i]) {
			return nil
		}
		out = append(out, s[start:i])
		start = i + 1
	}
	return out
}

// readClock reads hh:mm[:ss][.f] with an hour of at most maxHour.
func readClock(s string, maxHour int) (literalTemporal, bool) {
	var v literalTemporal
	whole, frac, hasFrac := strings.Cut(s, ".")
	parts := strings.Split(whole, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return v, false
	}
	var n [3]int
	for i, p := range parts {
		if !allDigits(p) || i > 0 && len(p) > 2 || len(p) > 3 {
			return v, false
		}
		n[i], _ = strconv.Atoi(p)
	}
	v.hour, v.minute, v.second = n[0], n[1], n[2]
	if hasFrac {
		var ok bool
		if v.micro, v.digits, ok = readFraction(frac); !ok {
			return v, false
		}
	}
	return v, v.hour <= maxHour && v.minute < 60 && v.second < 60
}

// checkDatetime reports whether v's fields are a date MySQL reads as a
// literal: the zero date, or a month 1-12 and a day the month has, and a
// time of day.
func checkDatetime(v literalTemporal) bool {
	if v.hour > 23 || v.minute > 59 || v.second > 59 {
		return false
	}
	if v.year == 0 && v.month == 0 && v.day == 0 {
		return true
	}
	return v.month >= 1 && v.month <= 12 && v.day >= 1 && v.day <= strToDateMonthDays(v.year, v.month)
}

// readLiteralTime reads s as MySQL's str_to_time does for a TIME
// literal: [-][D ]hh:mm[:ss][.f], or the digits [[[h]h]m]mss[.f]; at
// most 838:59:59.
func readLiteralTime(s string) (literalTemporal, bool) {
	var v literalTemporal
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "-") {
		v.negative = true
		s = strings.TrimSpace(s[1:])
	}
	days := 0
	if d, rest, ok := strings.Cut(s, " "); ok {
		if !allDigits(d) || len(d) > 2 {
			return v, false
		}
		days, _ = strconv.Atoi(d)
		s = strings.TrimLeft(rest, " ")
		if !strings.Contains(s, ":") {
			// 'D hh': hours.
			if !allDigits(s) || len(s) > 2 {
				return v, false
			}
			s += ":00"
		}
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	if allDigits(whole) {
		if len(whole) > 7 || days > 0 {
			return v, false
		}
		whole = strings.Repeat("0", 6-min(len(whole), 6)) + whole
		v.hour, _ = strconv.Atoi(whole[:len(whole)-4])
		v.minute, _ = strconv.Atoi(whole[len(whole)-4 : len(whole)-2])
		v.second, _ = strconv.Atoi(whole[len(whole)-2:])
		if hasFrac {
			var ok bool
			if v.micro, v.digits, ok = readFraction(frac); !ok {
				return v, false
			}
		}
		if v.minute > 59 || v.second > 59 {
			return v, false
		}
	} else {
		t, ok := readClock(s, 838)
		if !ok {
			return v, false
		}
		v.hour, v.minute, v.second, v.micro, v.digits = t.hour, t.minute, t.second, t.micro, t.digits
	}
	v.hour += days * 24
	return v, v.hour < 838 || v.hour == 838 && v.micro == 0
}
