package protocol

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// psOut is SERVER_PS_OUT_PARAMS: the result set carries the OUT and INOUT
// parameters of a prepared CALL.
const psOut = 0x1000

// outProcedures are the procedures TestCallOutParams calls.
var outProcedures = []string{
	"CREATE PROCEDURE oadd(IN a INT, OUT b INT) BEGIN SET b = a + 1; SELECT 'r' AS r; END",
	"CREATE PROCEDURE otwo(INOUT x BIGINT, OUT s VARCHAR(20), IN k INT) BEGIN SET x = x * k; SET s = CONCAT('k=', k); END",
	"CREATE PROCEDURE onull(OUT n INT) BEGIN END",
	"CREATE PROCEDURE oin(IN a INT) BEGIN SELECT 'r' AS r; END",
	"CREATE PROCEDURE osig(OUT b INT) BEGIN SET b = 1; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'no'; END",
}

// mustDial is dial without the greeting.
func mustDial(t *testing.T, s *testserver.Server) *wirefuzz.Conn {
	t.Helper()
	c, _ := dial(t, s)
	return c
}

// TestCallOutParams runs prepared CALLs (COM_STMT_EXECUTE) of procedures
// with OUT and INOUT parameters: after the result sets of the body's
// SELECTs comes one more, in the binary protocol, of one row holding the
// values of the OUT and INOUT parameters given by placeholders, named
// after the parameters and typed by them, ended with
// SERVER_PS_OUT_PARAMS and SERVER_MORE_RESULTS_EXISTS, then the CALL's OK
// packet (MySQL's and MariaDB's answer; percdb sent none). A procedure
// without such parameters, a CALL ended by an error, and a client that
// did not announce CLIENT_PS_MULTI_RESULTS (go-sql-driver) get none.
func TestCallOutParams(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dialWith(t, s, func(c *wirefuzz.Conn) { c.PSMultiResults = true })
		for _, q := range outProcedures {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		// describe writes each result as its status flags, its columns
		// (name, and type for the OUT parameters) and its binary rows in hex.
		describe := func(res []wirefuzz.Result) string {
			var parts []string
			for _, r := range res {
				var cols []string
				for _, col := range r.Columns {
					// The body's SELECTs are typed by GMS (a string
					// literal is a LONGTEXT): only the OUT parameters'
					// types are compared.
					if r.Status&psOut == 0 {
						cols = append(cols, col.Name)
					} else {
						cols = append(cols, fmt.Sprintf("%s:%d", col.Name, col.Type))
					}
				}
				var rows []string
				for _, b := range r.Binary {
					rows = append(rows, hex.EncodeToString(b))
				}
				parts = append(parts, fmt.Sprintf("%#x%v%v", r.Status&(mask|psOut), cols, rows))
			}
			return strings.Join(parts, " ")
		}
		for _, tc := range []struct {
			call string
			args []any
			want string
		}{
			// The SELECT's set, then the OUT parameter's (INT: type 3,
			// 4 bytes), then the OK packet.
			{"CALL oadd(?, ?)", []any{int64(1), int64(0)},
				"0xa[r][00000172] 0x100a[b:3][000002000000] 0x2[][]"},
			// Both parameters, in their order, the IN one left out:
			// BIGINT (8) and VARCHAR (253).
			{"CALL otwo(?, ?, ?)", []any{int64(21), nil, int64(2)},
				"0x100a[x:8 s:253][00002a00000000000000036b3d32] 0x2[][]"},
			// An OUT parameter the body never sets is NULL (bit 2 of
			// the NULL bitmap).
			{"CALL onull(?)", []any{nil}, "0x100a[n:3][0004] 0x2[][]"},
			// No OUT parameter, no such set.
			{"CALL oin(?)", []any{int64(4)}, "0xa[r][00000172] 0x2[][]"},
		} {
			id, _, err := c.Prepare(tc.call)
			if err != nil {
				t.Fatalf("prepare %s: %v", tc.call, err)
			}
			for i := 0; i < 2; i++ {
				res, err := c.Execute(id, tc.args...)
				if got := describe(res); err != nil || got != tc.want {
					t.Errorf("execution %d of %s%v: %s (%v), want %s", i, tc.call, tc.args, got, err, tc.want)
				}
			}
		}
		// An error ends the CALL: no OUT parameters follow.
		id, _, err := c.Prepare("CALL osig(?)")
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Execute(id, nil)
		var se *wirefuzz.ServerError
		if !errors.As(err, &se) || se.Code != 1644 || len(res) != 0 {
			t.Errorf("CALL osig(?): %s (%v), want error 1644 alone", describe(res), err)
		}
		// A constant written for an OUT parameter is error 1414 at the
		// execution (MariaDB's answer; a placeholder's value is a
		// constant too, but is taken), whatever the client announced.
		for _, conn := range []*wirefuzz.Conn{c, mustDial(t, s)} {
			id, _, err := conn.Prepare("CALL oadd(?, 5)")
			if err != nil {
				t.Fatalf("prepare CALL oadd(?, 5): %v", err)
			}
			res, err := conn.Execute(id, int64(1))
			if !errors.As(err, &se) || se.Code != 1414 || len(res) != 0 {
				t.Errorf("CALL oadd(?, 5): %s (%v), want error 1414 alone", describe(res), err)
			}
		}
		// In a transaction, the flags say so.
		if _, err := c.QueryAll("BEGIN"); err != nil {
			t.Fatal(err)
		}
		id, _, err = c.Prepare("CALL onull(?)")
		if err != nil {
			t.Fatal(err)
		}
		res, err = c.Execute(id, nil)
		if got, want := describe(res), "0x100b[n:3][0004] 0x3[][]"; err != nil || got != want {
			t.Errorf("CALL onull(?) in a transaction: %s (%v), want %s", got, err, want)
		}
		if _, err := c.QueryAll("COMMIT"); err != nil {
			t.Fatal(err)
		}
		// A client without CLIENT_PS_MULTI_RESULTS: the body's result
		// sets and the OK packet only.
		plain, _ := dial(t, s)
		id, _, err = plain.Prepare("CALL oadd(?, ?)")
		if err != nil {
			t.Fatal(err)
		}
		res, err = plain.Execute(id, int64(1), int64(0))
		if got, want := describe(res), "0xa[r][00000172] 0x2[][]"; err != nil || got != want {
			t.Errorf("CALL oadd(?, ?) without CLIENT_PS_MULTI_RESULTS: %s (%v), want %s", got, err, want)
		}
	})
}
