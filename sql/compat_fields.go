package sql

import (
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/tablemeta"
)

// Column definitions GMS sends differ from MySQL's where drivers look:
// a FLOAT or DOUBLE column has decimals 0, where MySQL sends 31
// (NOT_FIXED_DEC: no fixed number of decimals), which drivers and
// clients read as "format with 0 decimals" (Connector/J, the mysql
// client's --column-type-info, go-sql-driver's DecimalSize). GMS keeps no
// (M,D) of a FLOAT or DOUBLE column, so every one gets 31. The handler
// fixes the definitions of GMS's answers (fieldFilter, ComPrepare) before
// the fast path learns them.

//
// GMS also gives the columns of numbers, dates and times, BIT and YEAR
// the character set of the connection (utf8mb4); MySQL sends 63
// (binary) for them, and clients that decide by the character set
// whether a value is text or bytes read it as MySQL means it.
//
// MySQL flags such a column BINARY (BINARY_FLAG) when it is an
// expression's (Item::init_make_field: a binary-comparing character set)
// or a temporal or binary column of a table; a numeric column of a table
// carries no BINARY flag. GMS flagged none of them, so SELECT d + 0 of a
// DECIMAL d was "NUM" where MySQL and MariaDB say "BINARY NUM".

// notFixedDec is MySQL's NOT_FIXED_DEC.
const notFixedDec = 31

// binaryCollation is the collation id of the binary character set.
const binaryCollation = 63

// fixFields sets MySQL's decimals and character sets in column
// definitions fields.
func fixFields(fields []*querypb.Field) {
	for _, f := range fields {
		if d, length, ok := tablemeta.FixedDoubleDecimals(f.ColumnLength); ok && f.Type == sqltypes.Float64 {
			// A result of fixed decimals (compat/fixeddecimals.go).
			f.Decimals, f.ColumnLength = d, length
		} else if (f.Type == sqltypes.Float32 || f.Type == sqltypes.Float64) && f.Decimals == 0 {
			f.Decimals = notFixedDec
		}
		if binaryCharsetType(f.Type) {
			f.Charset = binaryCollation
			if f.OrgTable == "" || !(sqltypes.IsIntegral(f.Type) || sqltypes.IsFloat(f.Type) || f.Type == sqltypes.Decimal) {
				f.Flags |= uint32(querypb.MySqlFlag_BINARY_FLAG)
			}
		}
	}
}

// fieldFilter wraps the callback through which GMS answers a text query,
// fixing the column definitions of its result sets.
func fieldFilter(callback mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	return func(res *sqltypes.Result, more bool) error {
		if res != nil {
			fixFields(res.Fields)
		}
		return callback(res, more)
	}
}

// binaryCharsetType reports whether MySQL sends the binary character set
// in the definition of a column of type t: numbers, dates and times, BIT
// and YEAR.
func binaryCharsetType(t querypb.Type) bool {
	switch t {
	case sqltypes.Decimal, sqltypes.Bit, sqltypes.Year,
		sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp, sqltypes.Time:
		return true
	}
	return sqltypes.IsIntegral(t) || sqltypes.IsFloat(t)
}
