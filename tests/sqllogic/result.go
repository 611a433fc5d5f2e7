package sqllogic

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Value is one field of a result row as the engine sent it in the text
// protocol.
type Value struct {
	// Null is set for SQL NULL; Text is then empty.
	Null bool
	// Text is the value's text form.
	Text string
}

// Rows is the answer to a query.
type Rows struct {
	// Kinds has one letter per column for the type the engine declared: I
	// for integer types, R for DECIMAL/FLOAT/DOUBLE, T for everything else,
	// and '?' when the type says nothing about the values (a NULL literal).
	Kinds string
	// Values holds the fields row after row, len(Kinds) per row.
	Values []Value
}

// TypeCheck says how a query's column types are held against its type
// letters.
type TypeCheck int

const (
	// StrictTypes fails a query whose column types differ from its letters,
	// except that an integer column satisfies R (MySQL itself is not
	// consistent about when an expression is DECIMAL) and a NULL-typed
	// column satisfies anything. The MySQL-8 corpus was generated from
	// MySQL's declared column types, so a mismatch is a difference a client
	// sees; this is also the rule the published Dolt figure was measured
	// under.
	StrictTypes TypeCheck = iota
	// LooseTypes ignores the declared types and formats every value by its
	// column's letter, as SQLite's reference runner does.
	LooseTypes
)

// String returns the flag spelling of the mode.
func (c TypeCheck) String() string {
	if c == LooseTypes {
		return "loose"
	}
	return "strict"
}

// ParseTypeCheck turns the flag spelling back into a mode.
func ParseTypeCheck(s string) (TypeCheck, error) {
	switch s {
	case "strict":
		return StrictTypes, nil
	case "loose":
		return LooseTypes, nil
	}
	return 0, fmt.Errorf("type check %q: want strict or loose", s)
}

// FormatValue renders v under the type letter of its column the way the
// sqllogictest format writes it: NULL as "NULL"; I as an integer (%d, a real
// is truncated toward zero); R with three decimals (%.3f); T verbatim, except
// that the empty string is "(empty)" and control characters become '@' so
// that a value stays on one line. Text that does not parse as the letter's
// number is kept as it is, so that the mismatch shows.
func FormatValue(v Value, letter byte) string {
	if v.Null {
		return "NULL"
	}
	switch letter {
	case 'I':
		return formatInt(v.Text)
	case 'R':
		return formatReal(v.Text)
	default:
		return formatText(v.Text)
	}
}

func formatInt(s string) string {
	if _, err := strconv.ParseInt(s, 10, 64); err == nil {
		return s
	}
	if _, err := strconv.ParseUint(s, 10, 64); err == nil {
		return s
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return s
	}
	f = math.Trunc(f)
	if f >= math.MinInt64 && f < math.MaxInt64 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', 0, 64)
}

func formatReal(s string) string {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return s
	}
	return strconv.FormatFloat(f, 'f', 3, 64)
}

func formatText(s string) string {
	if s == "" {
		return "(empty)"
	}
	if strings.IndexFunc(s, isControl) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return '@'
		}
		return r
	}, s)
}

func isControl(r rune) bool { return r < ' ' || r == 0x7f }

// HashValues returns the MD5 of the values, each followed by "\n", in hex:
// the digest of the "N values hashing to MD5" lines.
func HashValues(values []string) string {
	h := md5.New()
	for _, v := range values {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// HashLine returns the "N values hashing to MD5" line for the values.
func HashLine(values []string) string {
	return fmt.Sprintf("%d values hashing to %s", len(values), HashValues(values))
}

// SortValues orders values, cols per row, by the sort mode in place.
func SortValues(values []string, cols int, mode SortMode) {
	switch mode {
	case ValueSort:
		sort.Strings(values)
	case RowSort:
		if cols <= 0 || len(values)%cols != 0 {
			return
		}
		sort.Sort(rowSorter{values: values, cols: cols})
	}
}

// rowSorter sorts a row-major slice by whole rows, column by column.
type rowSorter struct {
	values []string
	cols   int
}

func (s rowSorter) Len() int { return len(s.values) / s.cols }

func (s rowSorter) Less(i, j int) bool {
	a := s.values[i*s.cols : (i+1)*s.cols]
	b := s.values[j*s.cols : (j+1)*s.cols]
	for k := range a {
		if a[k] != b[k] {
			return a[k] < b[k]
		}
	}
	return false
}

func (s rowSorter) Swap(i, j int) {
	a := s.values[i*s.cols : (i+1)*s.cols]
	b := s.values[j*s.cols : (j+1)*s.cols]
	for k := range a {
		a[k], b[k] = b[k], a[k]
	}
}

// Outcome is what checking a query's rows against its record found.
type Outcome struct {
	// Values are the query's values formatted by the record's letters and
	// sorted by its sort mode: what the file would list.
	Values []string
	// Problem is empty when the rows match, else what is wrong.
	Problem string
	// Class is a short name for the kind of problem, for tallies.
	Class string
}

// Check holds rows against a query record.
func Check(rec *Record, rows *Rows, types TypeCheck) Outcome {
	want := rec.Types
	if len(rows.Kinds) != len(want) {
		return Outcome{
			Problem: fmt.Sprintf("expected %d columns (%s), got %d (%s)", len(want), want, len(rows.Kinds), rows.Kinds),
			Class:   "wrong column count",
		}
	}
	if types == StrictTypes {
		for i := 0; i < len(want); i++ {
			if !compatible(want[i], rows.Kinds[i]) {
				return Outcome{
					Values:  formatAll(rec, rows),
					Problem: fmt.Sprintf("column types %s, expected %s", rows.Kinds, want),
					Class:   "wrong column type",
				}
			}
		}
	}
	out := Outcome{Values: formatAll(rec, rows)}
	if rec.Hashed() {
		if len(out.Values) != rec.HashCount {
			out.Problem = fmt.Sprintf("expected %d values, got %d", rec.HashCount, len(out.Values))
			out.Class = "wrong row count"
		} else if HashValues(out.Values) != rec.Hash {
			out.Problem = "values differ (hash mismatch)"
			out.Class = "wrong values"
		}
		return out
	}
	if len(out.Values) != len(rec.Expected) {
		out.Problem = fmt.Sprintf("expected %d values, got %d", len(rec.Expected), len(out.Values))
		out.Class = "wrong row count"
		return out
	}
	for i, v := range out.Values {
		if v != rec.Expected[i] {
			out.Problem = fmt.Sprintf("value %d: expected %q, got %q", i+1, rec.Expected[i], v)
			out.Class = "wrong values"
			break
		}
	}
	return out
}

// compatible reports whether a column of declared kind got satisfies the
// letter want under StrictTypes.
func compatible(want, got byte) bool {
	return want == got || got == '?' || (want == 'R' && got == 'I')
}

// formatAll formats and sorts the values of rows under rec's letters.
func formatAll(rec *Record, rows *Rows) []string {
	cols := len(rec.Types)
	if cols == 0 {
		return nil
	}
	vals := make([]string, len(rows.Values))
	for i, v := range rows.Values {
		vals[i] = FormatValue(v, rec.Types[i%cols])
	}
	SortValues(vals, cols, rec.Sort)
	return vals
}
