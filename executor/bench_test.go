package executor

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/txn"
)

// sbtest is sysbench's table: id INT PRIMARY KEY, k INT, c CHAR(120),
// pad CHAR(60), INDEX k_1 (k).
func sbtest(b *testing.B) *Table {
	tbl := &Table{
		ID: 1, Name: "sbtest1",
		Columns:    []Column{{ID: 1}, {ID: 2}, {ID: 3}, {ID: 4}},
		HandleKind: HandleInt, PrimaryKey: []IndexColumn{{Offset: 0}},
		Indexes: []Index{{ID: 1, Name: "k_1", Columns: []IndexColumn{{Offset: 1}}}},
	}
	if err := tbl.Validate(); err != nil {
		b.Fatal(err)
	}
	return tbl
}

func sbRow(id int64) []any {
	return []any{id, id * 7 % 1000, strings.Repeat(fmt.Sprintf("%011d-", id), 10), strings.Repeat("x", 59)}
}

const sbRows = 1000

func loadSbtest(b *testing.B) (*txn.Store, *Table) {
	s := newStore(b)
	tbl := sbtest(b)
	ctx := context.Background()
	tx := begin(b, s)
	for id := int64(1); id <= sbRows; id++ {
		if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(id), sbRow(id)); err != nil {
			b.Fatal(err)
		}
	}
	commit(b, tx)
	return s, tbl
}

// BenchmarkPointGetLatest is an autocommit point select by primary key:
// one PointGet without a timestamp, and the row decode.
func BenchmarkPointGetLatest(b *testing.B) {
	s, tbl := loadSbtest(b)
	d := decoder(b, tbl)
	ctx := context.Background()
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i++ {
		if _, found, err := GetRow(ctx, LatestReader{s}, tbl, d, tablecodec.IntHandle(1+i%sbRows)); err != nil || !found {
			b.Fatal(found, err)
		}
	}
}

// BenchmarkPointGetTxn is the same read in a transaction (timestamp from
// the oracle, then Get), one transaction per read.
func BenchmarkPointGetTxn(b *testing.B) {
	s, tbl := loadSbtest(b)
	d := decoder(b, tbl)
	ctx := context.Background()
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i++ {
		tx := begin(b, s)
		if _, found, err := GetRow(ctx, tx, tbl, d, tablecodec.IntHandle(1+i%sbRows)); err != nil || !found {
			b.Fatal(found, err)
		}
		commit(b, tx)
	}
}

// BenchmarkIndexLookup100 reads 100 rows through the k index (sysbench's
// range queries are 100 rows), reporting the time per row.
func BenchmarkIndexLookup100(b *testing.B) {
	s, tbl := loadSbtest(b)
	d := decoder(b, tbl)
	ix := tbl.Index(1)
	ctx := context.Background()
	r, err := tbl.IndexRange(ix, Bound{}, Bound{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	rows := 0
	for b.Loop() {
		tx := begin(b, s)
		it, err := IndexLookup(ctx, tx, tbl, ix, d, r, ScanOptions{Limit: 100})
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := it.Next(ctx); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
			rows++
		}
		it.Close()
		commit(b, tx)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(rows), "ns/row")
}

// BenchmarkAddRecordCommit inserts one sysbench row per transaction: the
// duplicate check read, the row and its index entry, and the commit.
func BenchmarkAddRecordCommit(b *testing.B) {
	s, tbl := loadSbtest(b)
	ctx := context.Background()
	b.ReportAllocs()
	for id := int64(sbRows + 1); b.Loop(); id++ {
		tx := begin(b, s)
		if err := AddRecord(ctx, tx, tbl, tablecodec.IntHandle(id), sbRow(id)); err != nil {
			b.Fatal(err)
		}
		commit(b, tx)
	}
}

// BenchmarkUpdateIndexedCommit is sysbench's update_index: k changes, so
// the row and the k entry move, in one transaction each.
func BenchmarkUpdateIndexedCommit(b *testing.B) {
	s, tbl := loadSbtest(b)
	d := decoder(b, tbl)
	ctx := context.Background()
	b.ReportAllocs()
	for i := int64(0); b.Loop(); i++ {
		h := tablecodec.IntHandle(1 + i%sbRows)
		tx := begin(b, s)
		old, _, err := GetRow(ctx, tx, tbl, d, h)
		if err != nil {
			b.Fatal(err)
		}
		row := append([]any(nil), old...)
		row[1] = old[1].(int64) + 1
		if err := UpdateRecord(ctx, tx, tbl, h, h, old, row); err != nil {
			b.Fatal(err)
		}
		commit(b, tx)
	}
}
