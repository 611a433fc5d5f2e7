package sql_test

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestIntegerArithmetic checks +, -, * and % of integer columns and
// literals at the edges of BIGINT and BIGINT UNSIGNED against answers
// computed here exactly: the value when it fits the result type (BIGINT
// UNSIGNED when an operand is unsigned), else MySQL's error 1690 naming
// the expression; and the result column's type. GMS wrapped around
// (sql/compat/arith.go).
func TestIntegerArithmetic(t *testing.T) {
	db, exec := compatDB(t)
	exec("CREATE TABLE t (id INT PRIMARY KEY, b BIGINT, u BIGINT UNSIGNED, i INT)")
	type row struct {
		b int64
		u uint64
		i int32
	}
	rows := []row{
		{math.MaxInt64, math.MaxUint64, 7},
		{math.MinInt64, 0, -7},
		{math.MaxInt64 / 2, math.MaxUint64 / 2, 3},
		{-1, 1, math.MinInt32},
		{0, 1 << 63, 0},
	}
	for id, r := range rows {
		exec("INSERT INTO t VALUES (?, ?, ?, ?)", id, r.b, r.u, r.i)
	}
	col := func(r row, name string) *big.Int {
		switch name {
		case "b":
			return big.NewInt(r.b)
		case "u":
			return new(big.Int).SetUint64(r.u)
		case "i":
			return big.NewInt(int64(r.i))
		}
		var v big.Int
		if _, ok := v.SetString(name, 0); !ok {
			t.Fatalf("operand %q", name)
		}
		return &v
	}
	minInt, maxInt := big.NewInt(math.MinInt64), big.NewInt(math.MaxInt64)
	maxUint := new(big.Int).SetUint64(math.MaxUint64)
	for _, tc := range []struct {
		l, op, r string
		unsigned bool // an operand is unsigned
	}{
		{"b", "+", "1", false}, {"b", "-", "1", false}, {"b", "*", "2", false}, {"b", "*", "-1", false},
		{"b", "+", "b", false}, {"b", "-", "i", false}, {"i", "*", "i", false}, {"b", "%", "i", false},
		{"u", "+", "1", true}, {"u", "-", "1", true}, {"u", "*", "2", true}, {"u", "-", "i", true},
		{"u", "+", "i", true}, {"u", "+", "b", true}, {"u", "%", "i", true}, {"i", "-", "u", true},
		{"0x10", "+", "b", true}, {"b", "-", "0xFF", true},
	} {
		q := fmt.Sprintf("SELECT %s %s %s FROM t WHERE id = ?", tc.l, tc.op, tc.r)
		wantType := "BIGINT"
		if tc.unsigned && !(tc.op == "%" && tc.l == "i") {
			wantType = "UNSIGNED BIGINT"
		}
		for id, r := range rows {
			l, rv := col(r, tc.l), col(r, tc.r)
			want := new(big.Int)
			switch tc.op {
			case "+":
				want.Add(l, rv)
			case "-":
				want.Sub(l, rv)
			case "*":
				want.Mul(l, rv)
			case "%":
				if rv.Sign() == 0 {
					want = nil // NULL
				} else {
					want.Rem(l, rv)
				}
			}
			var wantErr string
			if want != nil {
				lo, hi := minInt, maxInt
				if wantType == "UNSIGNED BIGINT" {
					lo, hi = new(big.Int), maxUint
				}
				if want.Cmp(lo) < 0 || want.Cmp(hi) > 0 {
					name := map[bool]string{false: "BIGINT", true: "BIGINT UNSIGNED"}[wantType == "UNSIGNED BIGINT"]
					wantErr = fmt.Sprintf("%s value is out of range in '(%s %s %s)'", name, quoted(tc.l), tc.op, quoted(tc.r))
				}
			}
			rs, err := db.Query(q, id)
			if err == nil {
				var got *string
				if rs.Next() {
					types, _ := rs.ColumnTypes()
					if name := types[0].DatabaseTypeName(); name != wantType {
						t.Errorf("%s: column type %s, want %s", q, name, wantType)
					}
					err = rs.Scan(&got)
				}
				if err == nil {
					err = rs.Err()
				}
				rs.Close()
				if err == nil {
					switch {
					case wantErr != "":
						t.Errorf("%s (id %d) = %v, want error %q", q, id, deref(got), wantErr)
					case want == nil && got != nil, want != nil && (got == nil || *got != want.String()):
						t.Errorf("%s (id %d) = %v, want %v", q, id, deref(got), want)
					}
					continue
				}
			}
			var me *mysql.MySQLError
			if !errors.As(err, &me) || me.Number != 1690 || me.Message != wantErr || string(me.SQLState[:]) != "22003" {
				t.Errorf("%s (id %d): error %v, want 1690 (22003) %q", q, id, err, wantErr)
			}
		}
	}

	// A statement that overflows writes nothing: an UPDATE the fast path
	// takes, one GMS takes, INSERT ... SELECT, and a parameter.
	for _, q := range []string{
		"UPDATE t SET b = b + 1 WHERE id = 0",
		"UPDATE t SET b = b + 1, i = 1 WHERE id + 0 = 0",
		"UPDATE t SET u = u - 1 WHERE id >= 0",
		"INSERT INTO t SELECT id + 10, b * 2, u, i FROM t",
		"DELETE FROM t WHERE b + 1 > 0",
	} {
		_, err := db.Exec(q)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1690 {
			t.Errorf("%s: error %v, want 1690", q, err)
		}
	}
	if _, err := db.Exec("UPDATE t SET b = b + ? WHERE id = ?", 1, 0); err == nil || !strings.Contains(err.Error(), "1690") {
		t.Errorf("UPDATE with a parameter: error %v, want 1690", err)
	}
	// MySQL 8 types a parameter in arithmetic like the other operand: a
	// Go uint sent as an unsigned parameter does not make b - ? unsigned.
	var diff string
	if err := db.QueryRow("SELECT b - ? FROM t WHERE id = 3", uint64(255)).Scan(&diff); err != nil || diff != "-256" {
		t.Errorf("b - ? with b = -1 and an unsigned 255: %q, %v; want -256", diff, err)
	}
	got := queryRows(t, db, "SELECT id, b, u, i FROM t ORDER BY id")
	var want []string
	for id, r := range rows {
		want = append(want, fmt.Sprintf("%d %d %d %d", id, r.b, r.u, r.i))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after the failed statements:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// quoted writes a column or literal operand as MySQL's messages do.
func quoted(operand string) string {
	switch operand {
	case "b", "u", "i":
		return "`compat`.`t`.`" + operand + "`"
	}
	return strings.ToLower(operand)
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}
