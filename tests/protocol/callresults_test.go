package protocol

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// callProcedures are the procedures the CALL tests run.
var callProcedures = []string{
	"CREATE TABLE ct (id INT PRIMARY KEY, v VARCHAR(10))",
	"INSERT INTO ct VALUES (1, 'a'), (2, 'b')",
	"CREATE PROCEDURE p2() BEGIN SELECT 1 AS one; SELECT id, v FROM ct ORDER BY id; END",
	"CREATE PROCEDURE psig() BEGIN SELECT 1 AS one; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'boom'; SELECT 2; END",
	"CREATE PROCEDURE pnest() BEGIN CALL p2(); SELECT 3 AS three; END",
	"CREATE PROCEDURE pout(IN a INT, OUT b INT) BEGIN SET b = a + 1; SELECT b; END",
	"CREATE PROCEDURE pnest2(IN n INT) BEGIN CALL pnest(); SELECT n, DATE('2020-01-02') AS d, CAST('2020-01-02 03:04:05.5' AS DATETIME(1)) AS dt, CAST('-10:00:01' AS TIME) AS t, 1.25 AS x, NULL AS z; END",
	"CREATE PROCEDURE pset() BEGIN DECLARE x INT DEFAULT 0; SET x = 7; IF x > 1 THEN SELECT x AS x; END IF; END",
	"CREATE PROCEDURE pwrite(IN n INT) BEGIN INSERT INTO ct VALUES (n, 'w'); END",
	"CREATE PROCEDURE ploop() BEGIN DECLARE i INT DEFAULT 0; WHILE i < 3 DO SELECT i AS i; SET i = i + 1; END WHILE; END",
}

// TestCallResultSets runs CALLs whose procedures run several SELECTs, as a
// query: each SELECT answers with a result set ended with
// SERVER_MORE_RESULTS_EXISTS, then the CALL with its OK packet (GMS sent
// the last SELECT's rows only); a SIGNAL after a result set follows it as
// the error packet; a CALL without SELECTs answers with an OK packet.
func TestCallResultSets(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range callProcedures {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		run(t, c, []step{
			{sql: "CALL p2()", want: []uint16{ac | more, ac | more, ac}},
			{sql: "CALL pnest()", want: []uint16{ac | more, ac | more, ac | more, ac}},
			{sql: "CALL psig()", want: []uint16{ac | more}, err: 1644},
			{sql: "CALL pset()", want: []uint16{ac | more, ac}},
			{sql: "CALL pwrite(3)", want: []uint16{ac}},
			{sql: "CALL ploop()", want: []uint16{ac | more, ac | more, ac | more, ac}},
			{sql: "CALL p2(); SELECT 5", want: []uint16{ac | more, ac | more, ac | more, ac}, rows: "[[5]]"},
			{sql: "BEGIN", want: []uint16{ac | tx}},
			{sql: "CALL p2()", want: []uint16{ac | tx | more, ac | tx | more, ac | tx}},
			{sql: "COMMIT", want: []uint16{ac}},
			{sql: "SELECT COUNT(*) FROM ct", want: []uint16{ac}, rows: "[[3]]"},
		})
		// The rows and columns of each result set.
		res, err := c.QueryAll("CALL pnest()")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range res {
			var names []string
			for _, col := range r.Columns {
				names = append(names, col.Name)
			}
			got = append(got, fmt.Sprintf("%v%v", names, r.Rows))
		}
		if want := "[one][[1]] [id v][[1 a] [2 b] [3 w]] [three][[3]] [][]"; strings.Join(got, " ") != want {
			t.Errorf("CALL pnest(): %s, want %s", strings.Join(got, " "), want)
		}
		res, err = c.QueryAll("CALL ploop()")
		if err != nil || len(res) != 4 || fmt.Sprint(res[0].Rows, res[1].Rows, res[2].Rows) != "[[0]] [[1]] [[2]]" {
			t.Errorf("CALL ploop(): %v (%v)", res, err)
		}
	})
}

// TestCallResultSetsDriver reads a CALL's result sets through
// go-sql-driver (Rows.NextResultSet), as its own TestMultiResultSet and
// TestInterruptBySignal do: every SELECT's rows, and the SIGNAL's error
// after the first result set.
func TestCallResultSetsDriver(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db, err := sql.Open("mysql", s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range callProcedures {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		read := func(q string, args ...any) (string, error) {
			rows, err := db.Query(q, args...)
			if err != nil {
				return "", err
			}
			defer rows.Close()
			var sets []string
			for {
				cols, _ := rows.Columns()
				var vals []string
				for rows.Next() {
					dest := make([]sql.NullString, len(cols))
					ptrs := make([]any, len(cols))
					for i := range dest {
						ptrs[i] = &dest[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						return "", err
					}
					var row []string
					for _, d := range dest {
						row = append(row, d.String)
					}
					vals = append(vals, fmt.Sprint(row))
				}
				sets = append(sets, fmt.Sprintf("%v%v", cols, vals))
				if !rows.NextResultSet() {
					break
				}
			}
			return strings.Join(sets, " "), rows.Err()
		}
		got, err := read("CALL p2()")
		if want := "[one][[1]] [id v][[1 a] [2 b]]"; err != nil || got != want {
			t.Errorf("CALL p2(): %s (%v), want %s", got, err, want)
		}
		got, err = read("CALL psig()")
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != 1644 || got != "[one][[1]]" {
			t.Errorf("CALL psig(): %s (%v), want [one][[1]] and error 1644", got, err)
		}
		// Prepared (COM_STMT_EXECUTE, go-sql-driver with arguments): the
		// same result sets, in the binary protocol (GMS answered with the
		// last SELECT's rows only).
		got, err = read("CALL pnest2(?)", 7)
		if want := "[one][[1]] [id v][[1 a] [2 b]] [three][[3]] [n d dt t x z][[7 2020-01-02 2020-01-02 03:04:05.5 -10:00:01 1.25 ]]"; err != nil || got != want {
			t.Errorf("prepared CALL pnest2(?): %s (%v), want %s", got, err, want)
		}
		got, err = read("CALL psig()", []any{}...)
		if !errors.As(err, &me) || me.Number != 1644 || got != "[one][[1]]" {
			t.Errorf("CALL psig(): %s (%v), want [one][[1]] and error 1644", got, err)
		}
		// A placeholder for an OUT parameter is taken; go-sql-driver
		// does not announce CLIENT_PS_MULTI_RESULTS, so the parameter's
		// value is not sent back (MySQL and MariaDB do the same;
		// TestCallOutParams has a client that reads it).
		got, err = read("CALL pout(?, ?)", 1, 0)
		if got != "[b][[2]]" || err != nil {
			t.Errorf("prepared CALL pout(?, ?): %s (%v), want [b][[2]]", got, err)
		}
		stmt, err := db.Prepare("CALL p2()")
		if err != nil {
			t.Fatal(err)
		}
		defer stmt.Close()
		for i := 0; i < 2; i++ {
			rows, err := stmt.Query()
			if err != nil {
				t.Fatalf("prepared CALL p2(), execution %d: %v", i, err)
			}
			sets := 1
			for rows.NextResultSet() {
				sets++
			}
			if err := rows.Close(); err != nil || sets != 2 {
				t.Errorf("prepared CALL p2(), execution %d: %d result sets (%v), want 2", i, sets, err)
			}
		}
		// The connection goes on.
		var n int
		if err := db.QueryRow("SELECT COUNT(*) FROM ct").Scan(&n); err != nil || n != 2 {
			t.Errorf("after the CALLs: %d (%v)", n, err)
		}
	})
}

// TestCallHandlers runs procedures with handlers, for a cursor's NOT FOUND
// and an SQLEXCEPTION, CONTINUE and EXIT, whose statement is a SET of a
// local variable, a SELECT, SET @user_var or BEGIN ... END: the last
// three made GMS's interpreter start the body over forever, spinning a
// core (percdb then refused them with 1235); percdb's interpreter
// (sql/storedproc) runs them as MariaDB does. testdata/procs has more.
func TestCallHandlers(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		for _, q := range []string{
			"CREATE TABLE ch (id INT PRIMARY KEY)",
			"INSERT INTO ch VALUES (1), (2), (3)",
			"CREATE PROCEDURE csum() BEGIN DECLARE done INT DEFAULT 0; DECLARE x, total INT DEFAULT 0; " +
				"DECLARE cur CURSOR FOR SELECT id FROM ch; DECLARE CONTINUE HANDLER FOR NOT FOUND SET done = 1; " +
				"OPEN cur; l: LOOP FETCH cur INTO x; IF done = 1 THEN LEAVE l; END IF; SET total = total + x; END LOOP; CLOSE cur; SELECT total AS total; END",
			"CREATE PROCEDURE cexit() BEGIN DECLARE e INT DEFAULT 0; BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION SET e = 1; " +
				"SELECT * FROM nosuch; SET e = 2; END; SELECT e AS e; END",
			"CREATE PROCEDURE ccont() BEGIN DECLARE e INT DEFAULT 0; DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SET e = e + 1; " +
				"SELECT * FROM nosuch; SELECT * FROM nosuch; SELECT e AS e; END",
			"CREATE PROCEDURE cselect() BEGIN DECLARE CONTINUE HANDLER FOR SQLEXCEPTION SELECT 'h' AS h; INSERT INTO ch VALUES (9); SELECT * FROM nosuch; END",
			"CREATE PROCEDURE cuser() BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION SET @failed = 1; SELECT * FROM nosuch; END",
			"CREATE PROCEDURE cblock() BEGIN DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN SELECT 'h'; END; SELECT * FROM nosuch; END",
		} {
			if _, err := c.QueryAll(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		run(t, c, []step{
			{sql: "CALL csum()", want: []uint16{ac | more, ac}, rows: "[]"},
			{sql: "CALL cexit()", want: []uint16{ac | more, ac}},
			{sql: "CALL ccont()", want: []uint16{ac | more, ac}},
		})
		for q, want := range map[string]string{"CALL csum()": "[[6]]", "CALL cexit()": "[[1]]", "CALL ccont()": "[[2]]"} {
			res, err := c.QueryAll(q)
			if err != nil || len(res) == 0 || fmt.Sprint(res[0].Rows) != want {
				t.Errorf("%s: %v (%v), want %s", q, res, err, want)
			}
		}
		// A handler's statement may be any statement (GMS's interpreter
		// started the body over forever for one that gives rows).
		run(t, c, []step{
			{sql: "CALL cselect()", want: []uint16{ac | more, ac}, rows: "[]"},
			{sql: "CALL cuser()", want: []uint16{ac}},
			{sql: "SELECT @failed", want: []uint16{ac}, rows: "[[1]]"},
			{sql: "CALL cblock()", want: []uint16{ac | more, ac}, rows: "[]"},
			{sql: "SELECT COUNT(*) FROM ch", want: []uint16{ac}, rows: "[[4]]"},
		})
		// Again: now the INSERT fails too, and the handler runs twice.
		for q, want := range map[string]int{"CALL cselect()": 2, "CALL cblock()": 1} {
			res, err := c.QueryAll(q)
			if err != nil || len(res) != want+1 || fmt.Sprint(res[0].Rows) != "[[h]]" || fmt.Sprint(res[want-1].Rows) != "[[h]]" {
				t.Errorf("%s: %v (%v), want %d result sets [[h]] then OK", q, res, err, want)
			}
		}
	})
}
