package sql

import (
	"bytes"

	"github.com/dolthub/vitess/go/sqltypes"
)

// In the binary protocol (the rows of a prepared statement's answer) a
// DATE, DATETIME or TIMESTAMP value is a length byte and as many bytes of
// year, month, day, time and microseconds as it needs; MySQL sends the
// zero date '0000-00-00' (and '0000-00-00 00:00:00[.000000]') as length 0.
// vitess writes the zero date as its 4, 7 or 11 bytes of zeros, which
// drivers decode as a date of year 0, month 0, day 0: go-sql-driver's
// parseTime gave -0001-11-30, where the zero length gives time.Time{}
// (its documented zero-date value, as the text protocol gives). vitess
// writes a value whose text is empty as length 0, so the handler empties
// the text of zero dates in the binary answers it sends (binaryFilter).

// In the text protocol MySQL writes a DATETIME(n) or TIMESTAMP(n) value
// with exactly n fractional digits ('2024-02-03 04:05:06.500000' for
// DATETIME(6)); GMS drops the trailing zeros ('…06.5', and no fraction
// at all for a whole second), so a client that reads the text saw a
// value of a precision other than its column's. The text answers get the
// column's digits back (padFractions).

// padFractions gives the DATETIME(n) and TIMESTAMP(n) values of text
// result res the n fractional digits of their column definition.
func padFractions(res *sqltypes.Result) {
	for i, f := range res.Fields {
		if (f.Type != sqltypes.Datetime && f.Type != sqltypes.Timestamp) || f.Decimals == 0 || f.Decimals > 6 {
			continue
		}
		n := int(f.Decimals)
		for _, row := range res.Rows {
			if i >= len(row) || row[i].IsNull() {
				continue
			}
			if raw, ok := padFraction(row[i].Raw(), n); ok {
				row[i] = sqltypes.MakeTrusted(row[i].Type(), raw)
			}
		}
	}
}

// padFraction returns raw, a DATETIME's text, with n fractional digits
// when it has fewer, and whether it changed it.
func padFraction(raw []byte, n int) ([]byte, bool) {
	have := 0
	dot := bytes.LastIndexByte(raw, '.')
	if dot >= 0 {
		have = len(raw) - dot - 1
	}
	if have >= n || len(raw) < len("0000-00-00 00:00:00") {
		return raw, false
	}
	out := make([]byte, 0, len(raw)+n-have+1)
	out = append(out, raw...)
	if dot < 0 {
		out = append(out, '.')
	}
	for range n - have {
		out = append(out, '0')
	}
	return out, true
}

// binaryFilter wraps the callback of a prepared statement's execution,
// the fast path's and GMS's, so that zero dates are sent as MySQL sends
// them.
func binaryFilter(callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	return func(res *sqltypes.Result) error {
		if res != nil {
			zeroDatesEmpty(res)
		}
		return callback(res)
	}
}

// zeroDatesEmpty replaces the zero dates among the DATE, DATETIME and
// TIMESTAMP values of res by values of the same type with empty text.
func zeroDatesEmpty(res *sqltypes.Result) {
	var dateCols []int
	for i, f := range res.Fields {
		switch f.Type {
		case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
			dateCols = append(dateCols, i)
		}
	}
	if len(dateCols) == 0 {
		return
	}
	for _, row := range res.Rows {
		for _, i := range dateCols {
			if i < len(row) && isZeroDate(row[i]) {
				row[i] = sqltypes.MakeTrusted(row[i].Type(), nil)
			}
		}
	}
}

// isZeroDate reports whether v is a DATE, DATETIME or TIMESTAMP whose
// every digit is 0 ('0000-00-00', '0000-00-00 00:00:00.000'), not NULL.
func isZeroDate(v sqltypes.Value) bool {
	switch v.Type() {
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
	default:
		return false
	}
	raw := v.Raw()
	if len(raw) == 0 {
		return false
	}
	for _, b := range raw {
		if b >= '1' && b <= '9' {
			return false
		}
	}
	return true
}
