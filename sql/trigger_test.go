package sql_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/sql/sqltest"
)

// triggerSetup is a table with a trigger for every event, a table of the
// same shape without any, and the log the triggers write.
var triggerSetup = []string{
	"USE d",
	"CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0)",
	"CREATE TABLE plain (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0)",
	"CREATE TABLE log (seq INT AUTO_INCREMENT PRIMARY KEY, what VARCHAR(60))",
	"CREATE TRIGGER t_bi BEFORE INSERT ON t FOR EACH ROW SET NEW.k = NEW.k + 1000",
	"CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what) VALUES (CONCAT('ins ', NEW.id, ' ', NEW.k))",
	"CREATE TRIGGER t_bu BEFORE UPDATE ON t FOR EACH ROW SET NEW.k = NEW.k + 100",
	"CREATE TRIGGER t_au AFTER UPDATE ON t FOR EACH ROW INSERT INTO log (what) VALUES (CONCAT('upd ', OLD.id, ' ', OLD.k, '>', NEW.k))",
	"CREATE TRIGGER t_ad AFTER DELETE ON t FOR EACH ROW INSERT INTO log (what) VALUES (CONCAT('del ', OLD.id, ' ', OLD.k))",
}

// TestTriggersOnFastPathShapes: the statement shapes the fast path runs
// (INSERT VALUES, primary-key UPDATE and DELETE), as text, as prepared
// statements executed once and prepared once and executed again, run the
// table's triggers: the fast path leaves a table with triggers to GMS, and
// the answers are those of a server without the fast path.
func TestTriggersOnFastPathShapes(t *testing.T) {
	d := newDiff(t, triggerSetup...)
	d.checkTables = []string{"t", "log"}

	// The shapes are the fast path's on a table without triggers.
	d.fastStep("INSERT INTO plain (id, k) VALUES (1, 1)")
	d.fastStep("UPDATE plain SET k = 5 WHERE id = 1")
	d.fastStep("DELETE FROM plain WHERE id = 1")
	d.fastStep("INSERT INTO plain (id, k) VALUES (?, ?)", 2, 2)
	d.fastStep("UPDATE plain SET k = ? WHERE id = ?", 6, 2)
	d.fastStep("DELETE FROM plain WHERE id = ?", 2)

	hits := d.status("Percdb_fastpath_hits")
	d.step("INSERT INTO t (id, k) VALUES (1, 1)")
	d.step("UPDATE t SET k = 5 WHERE id = 1")
	d.step("DELETE FROM t WHERE id = 1")
	d.step("INSERT INTO t (id, k) VALUES (?, ?)", 2, 2)
	d.step("UPDATE t SET k = ? WHERE id = ?", 6, 2)
	d.step("DELETE FROM t WHERE id = ?", 2)
	for i := 3; i <= 4; i++ {
		d.stepPrepared("INSERT INTO t (id, k) VALUES (?, ?)", i, i)
		d.stepPrepared("UPDATE t SET k = ? WHERE id = ?", 10*i, i)
	}
	d.stepPrepared("DELETE FROM t WHERE id = ?", 3)
	if got := d.status("Percdb_fastpath_hits"); got != hits {
		t.Errorf("the fast path ran %d statements on a table with triggers", got-hits)
	}

	want := []string{
		"ins 1 1001", "upd 1 1001>105", "del 1 105",
		"ins 2 1002", "upd 2 1002>106", "del 2 106",
		"ins 3 1003", "upd 3 1003>130",
		"ins 4 1004", "upd 4 1004>140",
		"del 3 130",
	}
	if got := column(d.fast.run("SELECT what FROM log ORDER BY seq").rows, 0); !reflect.DeepEqual(got, want) {
		t.Errorf("log:\n got %q\nwant %q", got, want)
	}
	d.finish("t", "log", "plain")
}

// column returns column i of rows.
func column(rows [][]string, i int) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, r[i])
	}
	return out
}

// triggerConn is one connection to a server started by sqltest.
type triggerConn struct {
	t testing.TB
	c *sql.Conn
}

func connect(t testing.TB, s *sqltest.Server, db string) *triggerConn {
	t.Helper()
	c, err := s.Open(db).Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &triggerConn{t: t, c: c}
}

func (c *triggerConn) exec(stmts ...string) {
	c.t.Helper()
	for _, q := range stmts {
		if _, err := c.c.ExecContext(context.Background(), q); err != nil {
			c.t.Fatalf("%s: %v", q, err)
		}
	}
}

// fails runs q, which must fail with MySQL error code and message.
func (c *triggerConn) fails(q string, code uint16, msg string) {
	c.t.Helper()
	_, err := c.c.ExecContext(context.Background(), q)
	if got, _ := mysqlError(err); got == nil || got.Number != code || got.Message != msg {
		c.t.Fatalf("%s: error %v, want %d %q", q, err, code, msg)
	}
}

func (c *triggerConn) query(q string) [][]string {
	c.t.Helper()
	rows, err := c.c.QueryContext(context.Background(), q)
	if err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	out := readRows(rows)
	if err := rows.Err(); err != nil {
		c.t.Fatalf("%s: %v", q, err)
	}
	return out
}

// want fails the test unless q returns rows, each given as its values
// joined by spaces.
func (c *triggerConn) want(q string, rows ...string) {
	c.t.Helper()
	var got []string
	for _, r := range c.query(q) {
		got = append(got, strings.Join(r, " "))
	}
	if !reflect.DeepEqual(got, rows) && (len(got) != 0 || len(rows) != 0) {
		c.t.Fatalf("%s:\n got %q\nwant %q", q, got, rows)
	}
}

// TestTriggerDDL: MySQL's errors and notes for CREATE and DROP TRIGGER,
// SHOW TRIGGERS, SHOW CREATE TRIGGER and information_schema.TRIGGERS, and
// what DROP TABLE, RENAME TABLE and DROP DATABASE do to triggers.
func TestTriggerDDL(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d")
	c.exec(triggerSetup...)

	c.fails("CREATE TRIGGER t_ai AFTER INSERT ON plain FOR EACH ROW BEGIN END", 1359, "Trigger already exists")
	c.fails("CREATE TRIGGER T_AI AFTER INSERT ON t FOR EACH ROW BEGIN END", 1359, "Trigger already exists")
	c.fails("CREATE TRIGGER nt AFTER INSERT ON missing FOR EACH ROW BEGIN END", 1146, "Table 'd.missing' doesn't exist")
	// FOLLOWS and PRECEDES name a trigger of the same table, time and
	// event (GMS would store any name and then fail every write).
	const noRef = "Referenced trigger '%s' for the given action time and event type does not exist."
	c.fails("CREATE TRIGGER bad AFTER INSERT ON t FOR EACH ROW FOLLOWS nope BEGIN END", 3011, fmt.Sprintf(noRef, "nope"))
	c.fails("CREATE TRIGGER bad AFTER INSERT ON t FOR EACH ROW FOLLOWS t_bi BEGIN END", 3011, fmt.Sprintf(noRef, "t_bi"))
	c.fails("CREATE TRIGGER bad AFTER UPDATE ON t FOR EACH ROW PRECEDES t_ai BEGIN END", 3011, fmt.Sprintf(noRef, "t_ai"))
	c.fails("CREATE TRIGGER bad AFTER INSERT ON plain FOR EACH ROW PRECEDES t_ai BEGIN END", 3011, fmt.Sprintf(noRef, "t_ai"))
	c.exec("INSERT INTO plain VALUES (9, 9)", "DELETE FROM plain")
	c.fails("DROP TRIGGER nope", 1360, "Trigger does not exist")
	c.exec("DROP TRIGGER IF EXISTS nope")
	c.want("SHOW WARNINGS", "Note 1360 Trigger does not exist")

	c.want("SELECT trigger_name, event_manipulation, event_object_table, action_timing, action_order FROM information_schema.triggers WHERE trigger_schema = 'd' ORDER BY trigger_name",
		"t_ad DELETE t AFTER 1", "t_ai INSERT t AFTER 1", "t_au UPDATE t AFTER 1", "t_bi INSERT t BEFORE 1", "t_bu UPDATE t BEFORE 1")
	if got := c.query("SHOW CREATE TRIGGER t_bi"); len(got) != 1 || got[0][2] != triggerSetup[4] {
		t.Fatalf("SHOW CREATE TRIGGER t_bi = %q, want the statement %q", got, triggerSetup[4])
	}

	// A renamed table keeps its triggers, which go on firing; its old
	// name is free for a table without them.
	c.exec("RENAME TABLE t TO t2", "ALTER TABLE t2 RENAME TO t3", "CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	c.exec("INSERT INTO t3 VALUES (1, 1)", "UPDATE t3 SET k = 2", "DELETE FROM t3", "INSERT INTO t VALUES (1, 1)")
	c.want("SELECT what FROM log ORDER BY seq", "ins 1 1001", "upd 1 1001>102", "del 1 102")
	c.want("SELECT k FROM t", "1")
	c.want("SELECT DISTINCT event_object_table FROM information_schema.triggers WHERE trigger_schema = 'd'", "t3")

	// DROP TABLE drops the table's triggers: their names are free again.
	c.exec("DROP TABLE t3")
	c.want("SHOW TRIGGERS")
	c.exec("CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW INSERT INTO log (what) VALUES ('again')")
	c.exec("INSERT INTO t VALUES (2, 2)")
	c.want("SELECT what FROM log WHERE seq > 3", "again")

	// DROP DATABASE drops its triggers.
	c.exec("DROP DATABASE d", "CREATE DATABASE d", "USE d", "CREATE TABLE t (id INT PRIMARY KEY, k INT)")
	c.want("SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = 'd'")
	c.exec("CREATE TRIGGER t_ai AFTER INSERT ON t FOR EACH ROW BEGIN END", "INSERT INTO t VALUES (1, 1)")
}

// TestTriggerUndo: a trigger's writes belong to the statement that fired
// it: undone with it when the trigger or the statement fails, and with its
// transaction on ROLLBACK.
func TestTriggerUndo(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d")
	c.exec(triggerSetup...)
	c.exec("CREATE TABLE once (id INT PRIMARY KEY)",
		"CREATE TRIGGER plain_bi BEFORE INSERT ON plain FOR EACH ROW INSERT INTO once VALUES (NEW.k)")

	c.exec("INSERT INTO plain VALUES (1, 7)")
	// The trigger fails: the row is not inserted.
	c.fails("INSERT INTO plain VALUES (2, 7)", 1062, "Duplicate entry '7' for key 'once.PRIMARY'")
	// The statement fails after its trigger ran: the trigger's write is
	// undone.
	c.fails("INSERT INTO plain VALUES (1, 8)", 1062, "Duplicate entry '1' for key 'plain.PRIMARY'")
	c.want("SELECT id, k FROM plain", "1 7")
	c.want("SELECT id FROM once", "7")

	c.exec("BEGIN", "INSERT INTO t VALUES (1, 1)", "UPDATE t SET k = 0 WHERE id = 1")
	c.want("SELECT what FROM log ORDER BY seq", "ins 1 1001", "upd 1 1001>100")
	c.exec("ROLLBACK")
	c.want("SELECT what FROM log")
	c.want("SELECT id FROM t")
}

// TestTriggerOrderSurvivesRestart: triggers are in the store: after a
// restart they are listed and fire, in creation order amended by FOLLOWS
// and PRECEDES.
func TestTriggerOrderSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	s := sqltest.Start(t, dir)
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d")
	c.exec(triggerSetup...)
	for _, q := range []string{
		"CREATE TRIGGER o1 AFTER INSERT ON plain FOR EACH ROW INSERT INTO log (what) VALUES ('o1')",
		"CREATE TRIGGER o2 AFTER INSERT ON plain FOR EACH ROW INSERT INTO log (what) VALUES ('o2')",
		"CREATE TRIGGER o3 AFTER INSERT ON plain FOR EACH ROW PRECEDES o1 INSERT INTO log (what) VALUES ('o3')",
		"CREATE TRIGGER o4 AFTER INSERT ON plain FOR EACH ROW FOLLOWS o1 INSERT INTO log (what) VALUES ('o4')",
	} {
		c.exec(q)
	}
	order := []string{"o3", "o1", "o4", "o2"}
	c.exec("INSERT INTO plain (id, k) VALUES (1, 1)")
	c.want("SELECT what FROM log ORDER BY seq", order...)
	c.c.Close()
	s.Stop()

	s = sqltest.Start(t, dir)
	c = connect(t, s, "d")
	c.want("SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = 'd' AND event_object_table = 'plain' ORDER BY trigger_name", "o1", "o2", "o3", "o4")
	c.exec("DELETE FROM log", "INSERT INTO plain VALUES (2, 2)", "INSERT INTO t VALUES (1, 1)")
	c.want("SELECT what FROM log ORDER BY seq", append(order, "ins 1 1001")...)
}

// TestTriggersFromAnotherDatabase: writes to the tables of a database with
// triggers, and DROP TABLE, work when another database is the current
// one (GMS parses every trigger of the database for them, in the current
// database).
func TestTriggersFromAnotherDatabase(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d")
	c.exec(triggerSetup...)
	c.exec("CREATE DATABASE other", "USE other")
	c.exec("INSERT INTO d.plain VALUES (1, 1)", "UPDATE d.plain SET k = 2", "DELETE FROM d.plain WHERE id = 2")
	c.want("SELECT id, k FROM d.plain", "1 2")
	c.exec("DROP TABLE d.t")
	c.want("SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = 'd'")
	c.want("SHOW TABLES FROM d", "log", "plain")
}

// mysqlError returns err as a MySQL error.
func mysqlError(err error) (*mysql.MySQLError, bool) {
	var me *mysql.MySQLError
	ok := errors.As(err, &me)
	return me, ok
}

// TestTriggerCreatedAfterPrepare: a statement prepared before another
// session creates a trigger on its table runs the trigger, with the fast
// path and without.
func TestTriggerCreatedAfterPrepare(t *testing.T) {
	for _, fast := range []bool{true, false} {
		srv := startServer(t, fast)
		ctx := context.Background()
		if _, err := openDB(t, srv, "").Exec("CREATE DATABASE d"); err != nil {
			t.Fatal(err)
		}
		db := openDB(t, srv, "d")
		if _, err := db.Exec("CREATE TABLE t (id INT PRIMARY KEY, k INT)"); err != nil {
			t.Fatal(err)
		}
		c, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.PrepareContext(ctx, "INSERT INTO t (id, k) VALUES (?, ?)")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.Exec(1, 1); err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec("CREATE TRIGGER tr BEFORE INSERT ON t FOR EACH ROW SET NEW.k = NEW.k + 1000"); err != nil {
			t.Fatal(err)
		}
		if _, err := st.Exec(2, 2); err != nil {
			t.Fatal(err)
		}
		rows, err := c.QueryContext(ctx, "SELECT id, k FROM t ORDER BY id")
		if err != nil {
			t.Fatal(err)
		}
		if got, want := readRows(rows), [][]string{{"1", "1"}, {"2", "1002"}}; !reflect.DeepEqual(got, want) {
			t.Errorf("fast path %v: t = %v, want %v", fast, got, want)
		}
		rows.Close()
		st.Close()
		c.Close()
	}
}
