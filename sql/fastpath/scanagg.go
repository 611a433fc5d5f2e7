package fastpath

import (
	"math/big"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/shopspring/decimal"
)

// LocalAggregates computes a range SELECT's aggregates over the rows
// the SQL node kept (ScanPlan.LocalAgg): COUNT(*), COUNT(col), and SUM
// of integers and DECIMALs, exact, as a DECIMAL (NULL over no value), as
// MySQL and percdb's GMS path sum them. ok is false for a value of
// another type.
func LocalAggregates(out []PlanOut, rows []gsql.Row) (gsql.Row, bool) {
	res := make(gsql.Row, len(out))
	for i, o := range out {
		switch o.Agg {
		case AggCountStar:
			res[i] = int64(len(rows))
		case AggCount:
			n := int64(0)
			for _, row := range rows {
				if row[o.Col] != nil {
					n++
				}
			}
			res[i] = n
		case AggSum:
			var sum decimal.Decimal
			seen := false
			for _, row := range rows {
				if row[o.Col] == nil {
					continue
				}
				d, ok := exactDecimal(row[o.Col])
				if !ok {
					return nil, false
				}
				sum, seen = sum.Add(d), true
			}
			if seen {
				res[i] = sum
			}
		default:
			return nil, false
		}
	}
	return res, true
}

// exactDecimal returns an integer or DECIMAL column's value as a decimal.
func exactDecimal(v any) (decimal.Decimal, bool) {
	switch n := v.(type) {
	case decimal.Decimal:
		return n, true
	case int8:
		return decimal.NewFromInt(int64(n)), true
	case int16:
		return decimal.NewFromInt(int64(n)), true
	case int32:
		return decimal.NewFromInt(int64(n)), true
	case int64:
		return decimal.NewFromInt(n), true
	case uint8:
		return decimal.NewFromInt(int64(n)), true
	case uint16:
		return decimal.NewFromInt(int64(n)), true
	case uint32:
		return decimal.NewFromInt(int64(n)), true
	case uint64:
		return decimal.NewFromBigInt(new(big.Int).SetUint64(n), 0), true
	}
	return decimal.Decimal{}, false
}
