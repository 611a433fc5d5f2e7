package sql

import (
	"strconv"

	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/sql/compat"
)

// GMS writes a DOUBLE or FLOAT value of a text result as Go's shortest
// 'g' format: 1234567 was 1.234567e+06, 0.00001 was 1e-05, 1e15 was
// 1e+15, and a FLOAT kept all of float32's digits (3.1415927). MySQL
// writes a DOUBLE with its shortest digits in positional notation from
// 1e-15 up to below 1e15 and as 1e15, 1.5e-16 beyond, and a FLOAT with
// six significant digits (3.14159, 123457000) (my_gcvt).
// doubleTexts rewrites such values of a text result as MySQL does. The
// binary protocol sends the numbers themselves and is left alone.

// notFixedDecimals is MySQL's NOT_FIXED_DEC: the decimals of a result
// column whose values have no fixed number of decimals.
const notFixedDecimals = 31

// doubleTexts rewrites the DOUBLE and FLOAT values of res as MySQL
// writes them.
func doubleTexts(res *sqltypes.Result) {
	for i, f := range res.Fields {
		bits := 64
		switch f.Type {
		case sqltypes.Float64:
		case sqltypes.Float32:
			bits = 32
		default:
			continue
		}
		// A FLOAT(M,D) or DOUBLE(M,D) column, or a result of fixed
		// decimals (PI(), f + 0): MySQL writes that many digits after
		// the point (12.50, 3.141593), as my_fcvt does.
		fixed := int(f.Decimals)
		if fixed >= notFixedDecimals {
			fixed = -1
		}
		for _, row := range res.Rows {
			if i >= len(row) || row[i].IsNull() {
				continue
			}
			raw := row[i].Raw()
			v, err := strconv.ParseFloat(string(raw), bits)
			if err != nil || v == 0 && fixed < 0 {
				continue // a zero keeps its sign as written (-0)
			}
			text := compat.DoubleText(v, bits)
			if fixed >= 0 {
				text = strconv.FormatFloat(v, 'f', fixed, 64)
			}
			if text != string(raw) {
				row[i] = sqltypes.MakeTrusted(row[i].Type(), []byte(text))
			}
		}
	}
}
