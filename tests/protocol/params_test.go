package protocol

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// maxParams is the most parameters a prepared statement may have, in
// MySQL, MariaDB and percdb. (vitess reads the executes of statements
// with more than 65,528 wrongly; percdb decodes them, sql/wire.)
const maxParams = 65535

// placeholders returns n placeholders in groups like "(?),(?)".
func placeholders(n int, group string) string {
	return strings.TrimSuffix(strings.Repeat(group+",", n), ",")
}

// TestManyParams prepares and runs statements with as many parameters as
// drivers send for a bulk insert, up to the limit, and checks that more
// fail with error 1390 while the connection goes on.
func TestManyParams(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		limit := maxParams
		run(t, c, []step{
			{sql: "CREATE TABLE m (v BIGINT)", want: []uint16{ac}},
			{sql: fmt.Sprintf("INSERT INTO m VALUES (3), (5), (21), (%d)", (limit-1)*3), want: []uint16{ac}},
		})

		// An IN list of limit values: parameter i is 3*i, but for a
		// NULL past the bitmap's first byte (3*7 = 21 is not in it).
		id, params, err := c.Prepare("SELECT v FROM m WHERE v IN (" + placeholders(limit, "?") + ") ORDER BY v")
		if err != nil {
			t.Fatalf("prepare %d parameters: %v", limit, err)
		}
		if params != limit {
			t.Fatalf("prepare answered %d parameters, want %d", params, limit)
		}
		args := make([]any, limit)
		for i := range args {
			args[i] = int64(i * 3)
		}
		args[7] = nil
		res, err := c.Execute(id, args...)
		if err != nil {
			t.Fatalf("execute with %d parameters: %v", limit, err)
		}
		// Binary rows of one BIGINT: header, NULL bitmap, 8 bytes.
		var got []int64
		for _, row := range res[0].Binary {
			if len(row) != 10 {
				t.Fatalf("row %x, want 10 bytes", row)
			}
			got = append(got, int64(binary.LittleEndian.Uint64(row[2:])))
		}
		if want := []int64{3, int64(limit-1) * 3}; fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("IN list of %d parameters found %v, want %v", limit, got, want)
		}

		for _, n := range []int{limit + 1, 65535, 65536, 70000} {
			if n <= limit {
				continue
			}
			_, _, err := c.Prepare("SELECT " + placeholders(n, "?"))
			var se *wirefuzz.ServerError
			if !errors.As(err, &se) || se.Code != 1390 {
				t.Errorf("prepare of %d parameters: %v, want error 1390", n, err)
			}
			run(t, c, []step{{sql: "SELECT 1", want: []uint16{ac}, rows: "[[1]]"}})
		}
	})
}

// typedColumns are the columns of TestManyParamsTyped's tables after id,
// each with the binary-protocol type its parameter is sent as.
var typedColumns = []struct {
	def        string
	typ, flags byte
}{
	{"a TINYINT", 0x01, 0},            // MYSQL_TYPE_TINY
	{"b SMALLINT", 0x02, 0},           // MYSQL_TYPE_SHORT
	{"c BIGINT", 0x08, 0},             // MYSQL_TYPE_LONGLONG
	{"d BIGINT UNSIGNED", 0x08, 0x80}, // unsigned
	{"e FLOAT", 0x04, 0},              // MYSQL_TYPE_FLOAT
	{"f DOUBLE", 0x05, 0},             // MYSQL_TYPE_DOUBLE
	{"g VARCHAR(40)", 0xfd, 0},        // MYSQL_TYPE_VAR_STRING
	{"h BLOB", 0xfc, 0},               // MYSQL_TYPE_BLOB
	{"i DECIMAL(12,3)", 0xf6, 0},      // MYSQL_TYPE_NEWDECIMAL
	{"j DATE", 0x0a, 0},               // MYSQL_TYPE_DATE
	{"k DATETIME(6)", 0x0c, 0},        // MYSQL_TYPE_DATETIME, 11 bytes
	{"l DATETIME", 0x0c, 0},           // 7 bytes
	{"m TIME(6)", 0x0b, 0},            // MYSQL_TYPE_TIME, 12 bytes
	{"n TIME", 0x0b, 0},               // 8 bytes
}

// typedRow returns the parameters of row r of TestManyParamsTyped: its
// id, then a value per typedColumns, some of them NULL.
func typedRow(r int) []any {
	le16 := func(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
	le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
	le64 := func(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }
	date := []byte{byte(2000 + r%30), byte((2000 + r%30) >> 8), byte(1 + r%12), byte(1 + r%28)}
	clock := []byte{byte(r % 24), byte(r % 60), byte((r * 7) % 60)}
	values := [][]byte{
		{byte(int8(r%256 - 128))},
		le16(uint16(int16(r*7 - 20000))),
		le64(uint64(int64(r)*1_000_000_000_007 - 5)),
		le64(1<<63 + uint64(r)),
		le32(math.Float32bits(float32(r) / 4)),
		le64(math.Float64bits(float64(r) * 1.5e-3)),
		wirefuzz.AppendLenencString(nil, fmt.Sprintf("s%d'\\%d", r, r*r)),
		wirefuzz.AppendLenencString(nil, string([]byte{byte(r), 0, 0xff})),
		wirefuzz.AppendLenencString(nil, fmt.Sprintf("%d.%03d", r-2000, r%1000)),
		append([]byte{4}, date...),
		append(append(append([]byte{11}, date...), clock...), le32(uint32(r*137%1_000_000))...),
		append(append([]byte{7}, date...), clock...),
		append(append(append([]byte{12, byte(r % 2)}, le32(uint32(r%3))...), clock...), le32(uint32(r*31%1_000_000))...),
		append(append([]byte{8, byte(r % 2)}, le32(uint32(r%2))...), clock...),
	}
	row := []any{wirefuzz.Param{Type: 0x03, Value: le32(uint32(r))}} // MYSQL_TYPE_LONG
	for i, col := range typedColumns {
		if (r+i+1)%13 == 0 {
			row = append(row, nil)
			continue
		}
		row = append(row, wirefuzz.Param{Type: col.typ, Flags: col.flags, Value: values[i]})
	}
	return row
}

// TestManyParamsTyped inserts rows of every binary-protocol type with one
// prepared INSERT of 65,535 parameters (a driver's bulk insert) and checks
// them against the same rows inserted one statement each: the values of a
// statement with that many parameters must be read as those of a small
// one, NULLs past the 65,528th parameter included.
func TestManyParamsTyped(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		var defs []string
		for _, col := range typedColumns {
			defs = append(defs, col.def)
		}
		cols := "(id INT PRIMARY KEY, " + strings.Join(defs, ", ") + ")"
		run(t, c, []step{
			{sql: "CREATE TABLE big " + cols, want: []uint16{ac}},
			{sql: "CREATE TABLE small " + cols, want: []uint16{ac}},
		})
		width := 1 + len(typedColumns)
		rows := maxParams / width
		if rows*width != maxParams {
			t.Fatalf("%d columns do not divide %d parameters", width, maxParams)
		}
		group := "(" + placeholders(width, "?") + ")"
		bulk, params, err := c.Prepare("INSERT INTO big VALUES " + placeholders(rows, group))
		if err != nil || params != maxParams {
			t.Fatalf("prepare the bulk insert: %d parameters, %v", params, err)
		}
		var args []any
		for r := range rows {
			args = append(args, typedRow(r)...)
		}
		if _, err := c.Execute(bulk, args...); err != nil {
			t.Fatalf("bulk insert of %d parameters: %v", len(args), err)
		}
		one, _, err := c.Prepare("INSERT INTO small VALUES " + group)
		if err != nil {
			t.Fatal(err)
		}
		var sample []string
		for _, r := range []int{0, 1, 2, 3, 12, 13, 100, rows - 3, rows - 2, rows - 1} {
			if _, err := c.Execute(one, typedRow(r)...); err != nil {
				t.Fatalf("insert row %d: %v", r, err)
			}
			sample = append(sample, fmt.Sprint(r))
		}
		want, err := c.Query("SELECT * FROM small ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.Query("SELECT * FROM big WHERE id IN (" + strings.Join(sample, ", ") + ") ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("rows of the bulk insert:\n%v\nwant (inserted one by one):\n%v", got, want)
		}
		run(t, c, []step{{sql: "SELECT COUNT(*) FROM big", want: []uint16{ac}, rows: fmt.Sprintf("[[%d]]", rows)}})

		// A statement of 65,535 parameters again, all empty strings (as
		// go-sql-driver's TestPreparedManyCols sends them).
		sel, _, err := c.Prepare("SELECT " + placeholders(maxParams, "?"))
		if err != nil {
			t.Fatal(err)
		}
		empty := make([]any, maxParams)
		for i := range empty {
			empty[i] = ""
		}
		res, err := c.Execute(sel, empty...)
		if err != nil || len(res) != 1 || len(res[0].Binary) != 1 {
			t.Fatalf("SELECT of %d empty strings: %v, %v", maxParams, res, err)
		}
	})
}
