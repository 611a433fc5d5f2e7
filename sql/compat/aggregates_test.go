package compat

import (
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

func TestDecimalAggregates(t *testing.T) {
	ctx := gsql.NewEmptyContext()
	dec := types.MustCreateDecimalType(10, 2)
	for _, c := range []struct {
		name     string
		agg      gsql.Aggregation
		vals     []any
		want     string
		wantType string
	}{
		{"AVG of INT", aggregation.NewAvg(expression.NewGetField(0, types.Int32, "i", true)), []any{int32(1), int32(2)}, "1.5000", "decimal(14,4)"},
		{"AVG rounds half away from zero", aggregation.NewAvg(expression.NewGetField(0, types.Int32, "i", true)), []any{int32(-1), int32(-2), int32(-2)}, "-1.6667", "decimal(14,4)"},
		{"AVG skips NULL", aggregation.NewAvg(expression.NewGetField(0, types.Int64, "i", true)), []any{int64(3), nil}, "3.0000", "decimal(23,4)"},
		{"AVG of nothing", aggregation.NewAvg(expression.NewGetField(0, types.Int64, "i", true)), []any{nil}, "NULL", "decimal(23,4)"},
		{"SUM of BIGINT UNSIGNED", aggregation.NewSum(expression.NewGetField(0, types.Uint64, "u", true)), []any{uint64(18446744073709551615), uint64(1)}, "18446744073709551616", "decimal(42,0)"},
		{"SUM of BIGINT past the int64 range", aggregation.NewSum(expression.NewGetField(0, types.Int64, "i", true)), []any{int64(9223372036854775807), int64(9223372036854775807), int64(-1), int64(3)}, "18446744073709551616", "decimal(41,0)"},
		{"SUM of BIGINT below the int64 range", aggregation.NewSum(expression.NewGetField(0, types.Int64, "i", true)), []any{int64(-9223372036854775808), int64(-9223372036854775808), int64(-1)}, "-18446744073709551617", "decimal(41,0)"},
		{"SUM of INT, BIGINT UNSIGNED and DECIMAL values", aggregation.NewSum(expression.NewGetField(0, types.Int64, "i", true)), []any{int32(-5), uint64(18446744073709551615), int8(1), decimal.RequireFromString("2")}, "18446744073709551613", "decimal(41,0)"},
		{"AVG of SMALLINT", aggregation.NewAvg(expression.NewGetField(0, types.Int16, "i", true)), []any{int16(-32768), int16(32767), uint8(255)}, "84.6667", "decimal(9,4)"},
		{"SUM of DECIMAL", aggregation.NewSum(expression.NewGetField(0, dec, "d", true)), []any{decimal.RequireFromString("1.25"), decimal.RequireFromString("-0.05")}, "1.20", "decimal(32,2)"},
		{"AVG of DECIMAL", aggregation.NewAvg(expression.NewGetField(0, dec, "d", true)), []any{decimal.RequireFromString("0.01"), decimal.RequireFromString("0.02")}, "0.015000", "decimal(14,6)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, typ, ok := mysqlAggregate(c.agg)
			if !ok {
				t.Fatal("not replaced")
			}
			if typ.String() != c.wantType {
				t.Errorf("type %s, want %s", typ, c.wantType)
			}
			buf, err := m.NewBuffer()
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range c.vals {
				if err := buf.Update(ctx, gsql.Row{v}); err != nil {
					t.Fatal(err)
				}
			}
			v, err := buf.Eval(ctx)
			if err != nil {
				t.Fatal(err)
			}
			// As the client reads it.
			sv, err := typ.SQL(ctx, nil, v)
			if err != nil {
				t.Fatal(err)
			}
			got := sv.ToString()
			if v == nil {
				got = "NULL"
			}
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}
