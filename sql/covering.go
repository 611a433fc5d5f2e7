package sql

import (
	"context"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/sqltypes"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/sql/tablemeta"
)

// Covering index reads. A range of a secondary index whose entries hold
// every column the statement reads (the index's own columns and the
// primary key's, which the entry's handle carries) is answered from the
// entries alone, as InnoDB answers "Using index": one scan of the index,
// where a lookup reads each entry's row with a point read besides (a
// batch get of random keys, most of the cost of a short range). The key
// codec decodes integers exactly, so only integer columns are taken from
// entries (strings are keyed by collation sort keys or stored as bytes
// where GMS holds strings); any other column read makes the lookup read
// the rows as before.

// CoveredBy implements explain.CoveringTable: whether a static read of t
// through idx takes its columns from the entries alone.
func (t *Table) CoveredBy(idx gsql.Index) bool {
	x, ok := idx.(*Index)
	return ok && coveringRead(t, x.im) != nil
}

// coveringRead returns, for each column a read of t through ix yields,
// the conversion of its entry value (int64 or uint64, as the key codec
// decodes it) to the Go type GMS holds the column's values in; nil when
// the entries do not hold every column exactly.
func coveringRead(t *Table, ix *tablemeta.Index) []func(any) any {
	if ix == nil || ix.IsPrimary || ix.Exec == nil || ix.Prefixed {
		return nil
	}
	m := t.meta
	offsets := t.projection
	if offsets == nil {
		offsets = make([]int, len(m.Schema.Schema))
		for i := range offsets {
			offsets[i] = i
		}
	}
	if !m.Exec.Covers(ix.Exec, offsets) {
		return nil
	}
	conv := make([]func(any) any, len(offsets))
	for i, off := range offsets {
		if conv[i] = integerOf(m.Schema.Schema[off].Type); conv[i] == nil {
			return nil
		}
	}
	return conv
}

// integerOf returns the conversion of a decoded key integer to the Go
// type of an integer column of type t, nil when t is not one. A value
// that does not fit the type cannot have been written to the column.
func integerOf(t gsql.Type) func(any) any {
	signed := func(narrow func(int64) any) func(any) any {
		return func(v any) any {
			if i, ok := v.(int64); ok {
				return narrow(i)
			}
			return v
		}
	}
	unsigned := func(narrow func(uint64) any) func(any) any {
		return func(v any) any {
			if u, ok := v.(uint64); ok {
				return narrow(u)
			}
			return v
		}
	}
	switch t.Type() {
	case sqltypes.Int8:
		return signed(func(i int64) any { return int8(i) })
	case sqltypes.Int16:
		return signed(func(i int64) any { return int16(i) })
	case sqltypes.Int24, sqltypes.Int32:
		return signed(func(i int64) any { return int32(i) })
	case sqltypes.Int64:
		return signed(func(i int64) any { return i })
	case sqltypes.Uint8:
		return unsigned(func(u uint64) any { return uint8(u) })
	case sqltypes.Uint16:
		return unsigned(func(u uint64) any { return uint16(u) })
	case sqltypes.Uint24, sqltypes.Uint32:
		return unsigned(func(u uint64) any { return uint32(u) })
	case sqltypes.Uint64:
		return unsigned(func(u uint64) any { return u })
	}
	return nil
}

// coveredRows converts the rows of an executor.IndexOnly read to the
// columns' Go types.
type coveredRows struct {
	executor.RowIterator
	conv []func(any) any
}

// Next implements executor.RowIterator.
func (c coveredRows) Next(ctx context.Context) (executor.Row, error) {
	row, err := c.RowIterator.Next(ctx)
	if err != nil {
		return row, err
	}
	for i, v := range row.Values {
		if v != nil {
			row.Values[i] = c.conv[i](v)
		}
	}
	return row, nil
}
