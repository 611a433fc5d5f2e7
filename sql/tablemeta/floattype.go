package tablemeta

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// MySQL's FLOAT(M,D) and DOUBLE(M,D) (deprecated syntax that MySQL 8 still
// accepts) keep D digits after the point and M in all: a value written is
// rounded to D decimals, one with more than M-D digits before the point is
// out of range, and SHOW CREATE TABLE, information_schema.COLUMNS and the
// column definitions sent to clients (D decimals) say so. GMS drops M and
// D (FLOAT(7,4) is its FLOAT, and a FLOAT(30,4) its DOUBLE).
//
// percdb keeps them in the column's stored type ("float(7,4)") while the
// table's schema has GMS's FLOAT or DOUBLE, so that GMS compares,
// converts and computes the column's values as those of its own type
// (it tells its floating-point types by identity, types.IsFloat).
// ScaledFloatType carries M and D from a CREATE TABLE or ALTER TABLE to
// the stored definition; Table.Scales gives them to the writes that round.

// ScaledFloatType is the type of a FLOAT(M,D) or DOUBLE(M,D) column in a
// CREATE TABLE or ALTER TABLE being planned: GMS's FLOAT or DOUBLE with M
// and D.
type ScaledFloatType struct {
	gsql.NumberType
	Scale FloatScale
}

// FloatScale is the M and D of a FLOAT(M,D) or DOUBLE(M,D) column.
type FloatScale struct {
	// Double tells DOUBLE(M,D) from FLOAT(M,D).
	Double bool
	// M is the number of digits in all (1 to 255), D after the point (0
	// to 30, at most M).
	M, D int
}

// NewScaledFloatType returns the type of FLOAT(m,d), or DOUBLE(m,d) when
// double; an error when m and d are out of MySQL's ranges (GMS then
// answers for the column as it would without them).
func NewScaledFloatType(double bool, m, d int) (ScaledFloatType, error) {
	if m < 1 || m > 255 || d < 0 || d > 30 || d > m {
		return ScaledFloatType{}, fmt.Errorf("float(%d,%d) is out of range", m, d)
	}
	base := types.Float32
	if double {
		base = types.Float64
	}
	return ScaledFloatType{NumberType: base, Scale: FloatScale{Double: double, M: m, D: d}}, nil
}

// String implements sql.Type: the type as MySQL names it, which is also
// how the catalog stores it (typeString, ParseFloatScale).
func (t ScaledFloatType) String() string { return t.Scale.String() }

// Equals implements sql.Type.
func (t ScaledFloatType) Equals(other gsql.Type) bool {
	o, ok := other.(ScaledFloatType)
	return ok && o.Scale == t.Scale
}

// String is the type's name: float(M,D) or double(M,D).
func (s FloatScale) String() string {
	name := "float"
	if s.Double {
		name = "double"
	}
	return fmt.Sprintf("%s(%d,%d)", name, s.M, s.D)
}

// ParseFloatScale reads the M and D of a stored type text,
// "float(M,D)" or "double(M,D)"; false for any other type.
func ParseFloatScale(typ string) (FloatScale, bool) {
	var s FloatScale
	rest, ok := strings.CutPrefix(typ, "float(")
	if !ok {
		if rest, ok = strings.CutPrefix(typ, "double("); !ok {
			return FloatScale{}, false
		}
		s.Double = true
	}
	args, ok := strings.CutSuffix(rest, ")")
	m, d, ok2 := strings.Cut(args, ",")
	if !ok || !ok2 {
		return FloatScale{}, false
	}
	var err1, err2 error
	s.M, err1 = strconv.Atoi(m)
	s.D, err2 = strconv.Atoi(d)
	if err1 != nil || err2 != nil {
		return FloatScale{}, false
	}
	return s, true
}

// Base returns GMS's type of a column of scale s: FLOAT or DOUBLE.
func (s FloatScale) Base() gsql.Type {
	if s.Double {
		return types.Float64
	}
	return types.Float32
}

// Max is the largest value of the column: M-D nines, a point, D nines.
func (s FloatScale) Max() float64 {
	return (math.Pow10(s.M) - 1) / math.Pow10(s.D)
}

// Round returns v, a value of the column (float32 or float64; anything
// else as it is), rounded to D decimals as MySQL stores it (half to even
// on the scaled value, the C library's rint), and false when it is out
// of range: more than Max, or less than -Max.
func (s FloatScale) Round(v any) (any, bool) {
	var f float64
	switch x := v.(type) {
	case float32:
		f = float64(x)
	case float64:
		f = x
	default:
		return v, true
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return v, false
	}
	p := math.Pow10(s.D)
	r := math.RoundToEven(f*p) / p
	if math.IsInf(f*p, 0) {
		r = f
	}
	if math.Abs(r) > s.Max() {
		return v, false
	}
	if _, single := v.(float32); single {
		return float32(r), true
	}
	return r, true
}

// MySQL gives a DOUBLE result a fixed number of decimals where its
// arguments have them (Item::decimals): PI() has 6, f + 0 the D of a
// FLOAT(M,D) column f, d / 2 D+4, ROUND(x, 2) 2; the column definition
// says so and the text protocol writes the value with that many digits
// after the point (3.141593, 12.50). FixedDoubleType is GMS's DOUBLE
// with such decimals, the type of a result column of a query only (GMS
// tells its floating-point types by identity, so nothing computes with
// it). Its column length carries the decimals to the server, which sees
// column definitions and not types (FixedDoubleDecimals).
type FixedDoubleType struct {
	gsql.NumberType
	// Decimals is the number of digits after the point, 0 to 30.
	Decimals int
}

// fixedDoubleLengthBase is the column length FixedDoubleType announces
// for 0 decimals, and one more for each: no DOUBLE's length is near it.
const fixedDoubleLengthBase = 0x7F000000

// NewFixedDoubleType returns the type of a DOUBLE result of decimals
// digits after the point, 0 to 30.
func NewFixedDoubleType(decimals int) FixedDoubleType {
	return FixedDoubleType{NumberType: types.Float64, Decimals: min(max(decimals, 0), 30)}
}

// MaxTextResponseByteLength implements sql.Type: the decimals encoded
// for FixedDoubleDecimals.
func (t FixedDoubleType) MaxTextResponseByteLength(*gsql.Context) uint32 {
	return fixedDoubleLengthBase + uint32(t.Decimals)
}

// String implements sql.Type.
func (t FixedDoubleType) String() string { return "double" }

// Equals implements sql.Type.
func (t FixedDoubleType) Equals(other gsql.Type) bool {
	o, ok := other.(FixedDoubleType)
	return ok && o.Decimals == t.Decimals
}

// FixedDoubleDecimals reads the decimals of a DOUBLE result column from
// the column length GMS put in its definition, and MySQL's length for
// them (float_length: 17 and the decimals); false when the length is no
// FixedDoubleType's.
func FixedDoubleDecimals(length uint32) (decimals, mysqlLength uint32, ok bool) {
	if length < fixedDoubleLengthBase || length > fixedDoubleLengthBase+30 {
		return 0, 0, false
	}
	d := length - fixedDoubleLengthBase
	return d, 17 + d, true
}
