package sql

import (
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/catalog"
	"github.com/percdb/percdb/sql/tablemeta"
)

// Fractional seconds where GMS drops them:
//
//   - TIME(0) to TIME(5) in CREATE TABLE and ALTER TABLE fail in GMS:
//     see sql/compat/timefsp.go.
//   - The column definitions GMS sends give every TIMESTAMP column 0
//     decimals (its check for a type with fractions is true of DATETIME
//     only) and no TIME column any, and give DATETIME(n) and TIMESTAMP(n)
//     the length of a value of six digits (26; MySQL's is 19, or 20+n).
//     Drivers read the decimals to know a column's precision (Connector/J
//     and go-sql-driver's DecimalSize), and percdb's own text answers pad
//     values to them (padFractions). fixPrecisions looks the precision of
//     a table's TIMESTAMP and TIME columns up in the catalog. It also
//     gives YEAR columns MySQL's UNSIGNED and ZEROFILL flags, which GMS
//     leaves out.

// temporalFieldFilter is fieldFilter (compat_fields.go) with MySQL's
// precisions of temporal columns (fixPrecisions).
func (h *handler) temporalFieldFilter(c *mysql.Conn, callback mysql.ResultSpoolFn) mysql.ResultSpoolFn {
	return fieldFilter(func(res *sqltypes.Result, more bool) error {
		if res != nil {
			h.fixPrecisions(c, res.Fields)
			h.fixAliasSpellings(c, res.Fields)
		}
		return callback(res, more)
	})
}

// fixPrecisions gives the TIMESTAMP and TIME columns of tables among
// fields their decimals from the catalog, and DATETIME and TIMESTAMP
// columns MySQL's length.
func (h *handler) fixPrecisions(c *mysql.Conn, fields []*querypb.Field) {
	var cat *catalog.Catalog
	for _, f := range fields {
		switch f.Type {
		case sqltypes.Timestamp, sqltypes.Time:
			if f.Type == sqltypes.Time && f.Decimals == 0 && f.OrgTable == "" && (f.ColumnLength > 11 && f.ColumnLength < 17 || f.ColumnLength == tablemeta.ExprTime6Length) {
				// An expression of percdb's TIME(n), n from 1 to 6
				// (CAST(x AS TIME(3))), whose length, 11+n (or
				// ExprTime6Length for 6), GMS sets and whose decimals it
				// leaves 0. (17 is GMS's TIME, of any digits.)
				f.Decimals = min(f.ColumnLength-11, 6)
				f.ColumnLength = 11 + f.Decimals
				break
			}
			if f.Decimals != 0 || f.OrgTable == "" || f.Database == "" {
				break
			}
			if cat == nil {
				s := h.sessions.get(c.ConnectionID)
				if s == nil {
					return
				}
				if cat = s.provider.catalogs.Cached(); cat == nil {
					return
				}
			}
			n := columnPrecision(cat, f.Database, f.OrgTable, f.OrgName)
			if f.Type == sqltypes.Time && n == 6 {
				// GMS's TIME, which a TIME column without digits
				// gets too: announced as MySQL's TIME, of none.
				n = 0
			}
			f.Decimals = uint32(n)
		case sqltypes.Datetime:
		case sqltypes.Float32, sqltypes.Float64:
			// FLOAT(M,D) and DOUBLE(M,D) (compat_floatscale.go).
			if s := h.sessions.get(c.ConnectionID); s != nil && f.OrgTable != "" {
				if cat == nil {
					cat = s.provider.catalogs.Cached()
				}
				if cat != nil {
					floatScaleField(cat, f)
				}
			}
			continue
		case sqltypes.Year:
			// MySQL's YEAR is an unsigned, zero-filled number
			// (go-sql-driver scans it into a uint16 then).
			f.Flags |= uint32(querypb.MySqlFlag_UNSIGNED_FLAG | querypb.MySqlFlag_ZEROFILL_FLAG)
			continue
		default:
			continue
		}
		if f.Type != sqltypes.Time && f.Decimals <= 6 {
			// GMS's is 26 whatever the digits.
			f.ColumnLength = 19
			if f.Decimals > 0 {
				f.ColumnLength += 1 + f.Decimals
			}
		}
	}
}

// columnPrecision returns the fractional digits of column col of table
// db.table in cat, from its stored type (time(3), timestamp(6)); 0 when
// the table or column is not found (an alias, a view).
func columnPrecision(cat *catalog.Catalog, db, table, col string) int {
	d, ok := cat.Database(db)
	if !ok {
		return 0
	}
	t, ok := cat.Table(d.ID, table)
	if !ok {
		return 0
	}
	cd, _, ok := t.ColumnByName(col)
	if !ok {
		return 0
	}
	typ := cd.Type
	open := strings.IndexByte(typ, '(')
	if open < 0 || len(typ) < open+3 || typ[open+2] != ')' {
		return 0
	}
	n := int(typ[open+1] - '0')
	if n < 0 || n > 6 {
		return 0
	}
	return n
}
