package sql_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	percsql "github.com/percdb/percdb/sql"
	"github.com/percdb/percdb/sql/sqltest"
)

// fkSetup is a parent, a child that cascades, a child that restricts and
// a grandchild, as an ORM's migration creates them.
var fkSetup = []string{
	"CREATE DATABASE d", "USE d",
	"CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(20), UNIQUE KEY (name))",
	"CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_c FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)",
	"CREATE TABLE g (id INT PRIMARY KEY, cid INT, FOREIGN KEY (cid) REFERENCES c (id) ON DELETE CASCADE)",
	"CREATE TABLE r (id INT PRIMARY KEY, pname VARCHAR(20), FOREIGN KEY (pname) REFERENCES p (name))",
	"INSERT INTO p VALUES (1, 'a'), (2, 'b'), (3, 'c')",
	"INSERT INTO c VALUES (10, 1), (11, 2), (12, NULL)",
	"INSERT INTO g VALUES (100, 10), (101, 11)",
	"INSERT INTO r VALUES (1, 'c')",
}

const (
	msgChildFails  = "Cannot add or update a child row: a foreign key constraint fails "
	msgParentFails = "Cannot delete or update a parent row: a foreign key constraint fails "
	fkcDesc        = "(`d`.`c`, CONSTRAINT `fk_c` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE ON UPDATE CASCADE)"
	fkrDesc        = "(`d`.`r`, CONSTRAINT `r_ibfk_1` FOREIGN KEY (`pname`) REFERENCES `p` (`name`))"
)

// TestForeignKeyEnforcement: inserts and updates of a child need a
// parent (1452), a parent with children cannot go (1451) unless the key
// cascades, through two levels; NULL references nothing; the statement
// that fails changes nothing.
func TestForeignKeyEnforcement(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec(fkSetup...)

	c.fails("INSERT INTO c VALUES (13, 9)", 1452, msgChildFails+fkcDesc)
	c.fails("INSERT INTO c VALUES (13, 1), (14, 9)", 1452, msgChildFails+fkcDesc)
	c.want("SELECT count(*) FROM c", "3")
	c.fails("UPDATE c SET pid = 9 WHERE id = 10", 1452, msgChildFails+fkcDesc)
	c.fails("REPLACE INTO c VALUES (10, 9)", 1452, msgChildFails+fkcDesc)
	c.fails("INSERT INTO c VALUES (10, 1) ON DUPLICATE KEY UPDATE pid = 9", 1452, msgChildFails+fkcDesc)
	c.fails("INSERT INTO r VALUES (2, 'zz')", 1452, msgChildFails+fkrDesc)
	c.exec("INSERT INTO c VALUES (13, NULL)", "UPDATE c SET pid = 3 WHERE id = 13")

	// RESTRICT (the default) through r: 'c' has a child, 'a' and 'b' not.
	c.fails("DELETE FROM p WHERE id = 3", 1451, msgParentFails+fkrDesc)
	c.fails("UPDATE p SET name = 'cc' WHERE id = 3", 1451, msgParentFails+fkrDesc)
	c.exec("UPDATE p SET name = 'aa' WHERE id = 1")

	// CASCADE, two levels: p -> c -> g.
	c.exec("DELETE FROM p WHERE id = 1")
	c.want("SELECT id, pid FROM c ORDER BY id", "11 2", "12 NULL", "13 3")
	c.want("SELECT id, cid FROM g ORDER BY id", "101 11")
	c.exec("UPDATE p SET id = 20 WHERE id = 2")
	c.want("SELECT id, pid FROM c ORDER BY id", "11 20", "12 NULL", "13 3")
	// g references c.id, which did not change.
	c.want("SELECT id, cid FROM g ORDER BY id", "101 11")
}

// TestForeignKeyActions: SET NULL, composite keys, self-references,
// REPLACE and ON DUPLICATE KEY UPDATE of a parent.
func TestForeignKeyActions(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d",
		"CREATE TABLE emp (id INT PRIMARY KEY, boss INT, FOREIGN KEY (boss) REFERENCES emp (id) ON DELETE CASCADE)",
		"INSERT INTO emp VALUES (1, NULL), (2, 1), (3, 2), (4, 4), (5, 4)")
	c.fails("INSERT INTO emp VALUES (6, 7)", 1452, msgChildFails+
		"(`d`.`emp`, CONSTRAINT `emp_ibfk_1` FOREIGN KEY (`boss`) REFERENCES `emp` (`id`) ON DELETE CASCADE)")
	c.exec("INSERT INTO emp VALUES (7, 7)", "DELETE FROM emp WHERE id = 1")
	c.want("SELECT id, boss FROM emp ORDER BY id", "4 4", "5 4", "7 7")

	c.exec("CREATE TABLE cp (a INT, b INT, v INT, PRIMARY KEY (a, b))",
		"CREATE TABLE cc (id INT PRIMARY KEY, a INT, b INT, FOREIGN KEY (a, b) REFERENCES cp (a, b) ON UPDATE CASCADE ON DELETE SET NULL)",
		"INSERT INTO cp VALUES (1, 1, 0), (1, 2, 0)", "INSERT INTO cc VALUES (1, 1, 1), (2, 1, 2), (3, 1, NULL)")
	c.fails("INSERT INTO cc VALUES (4, 2, 1)", 1452, msgChildFails+
		"(`d`.`cc`, CONSTRAINT `cc_ibfk_1` FOREIGN KEY (`a`, `b`) REFERENCES `cp` (`a`, `b`) ON DELETE SET NULL ON UPDATE CASCADE)")
	c.exec("UPDATE cp SET b = 5 WHERE b = 1", "DELETE FROM cp WHERE b = 2")
	c.want("SELECT id, a, b FROM cc ORDER BY id", "1 1 5", "2 NULL NULL", "3 1 NULL")
	// ON DUPLICATE KEY UPDATE changes the parent's key: it cascades.
	c.exec("INSERT INTO cp VALUES (1, 5, 0) ON DUPLICATE KEY UPDATE b = 6")
	c.want("SELECT id, a, b FROM cc ORDER BY id", "1 1 6", "2 NULL NULL", "3 1 NULL")
	// REPLACE deletes the parent row it replaces: its children are set
	// to NULL, as in InnoDB.
	c.exec("REPLACE INTO cp VALUES (1, 6, 1)")
	c.want("SELECT id, a, b FROM cc ORDER BY id", "1 NULL NULL", "2 NULL NULL", "3 1 NULL")
}

// TestForeignKeyDefinitionErrors: MySQL's errors for foreign keys that
// cannot be made, and for dropping what one needs; a failed CREATE TABLE
// leaves nothing.
func TestForeignKeyDefinitionErrors(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec(fkSetup...)
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pid VARCHAR(10), FOREIGN KEY (pid) REFERENCES p (id))", 3780,
		"Referencing column 'pid' and referenced column 'id' in foreign key constraint 'x_ibfk_1' are incompatible.")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pid BIGINT, CONSTRAINT a FOREIGN KEY (id) REFERENCES p (id), FOREIGN KEY (pid) REFERENCES p (id))", 3780,
		"Referencing column 'pid' and referenced column 'id' in foreign key constraint 'x_ibfk_1' are incompatible.")
	c.exec("CREATE TABLE p2 (id INT PRIMARY KEY, k INT)")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pk INT, CONSTRAINT x_fk FOREIGN KEY (pk) REFERENCES p2 (k))", 1822,
		"Failed to add the foreign key constraint. Missing index for constraint 'x_fk' in the referenced table 'p2'")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pk INT, FOREIGN KEY (pk) REFERENCES p2 (k))", 1822,
		"Failed to add the foreign key constraint. Missing index for constraint 'x_ibfk_1' in the referenced table 'p2'")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pk INT, FOREIGN KEY (pk) REFERENCES nope (id))", 1824,
		"Failed to open the referenced table 'nope'")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pk INT, FOREIGN KEY (pk) REFERENCES p2 (nope))", 3734,
		"Failed to add the foreign key constraint. Missing column 'nope' for constraint 'x_ibfk_1' in the referenced table 'p2'")
	c.fails("ALTER TABLE p2 ADD FOREIGN KEY (k) REFERENCES p (name)", 3780,
		"Referencing column 'k' and referenced column 'name' in foreign key constraint 'p2_ibfk_1' are incompatible.")
	c.fails("ALTER TABLE p2 ADD CONSTRAINT k_fk FOREIGN KEY (k) REFERENCES nope (id)", 1824, "Failed to open the referenced table 'nope'")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET DEFAULT)", 1215,
		"Cannot add foreign key constraint")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pid INT NOT NULL, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE SET NULL)", 1830,
		"Column 'pid' cannot be NOT NULL: needed in a foreign key constraint SET NULL")
	c.fails("CREATE TABLE x (id INT PRIMARY KEY, pid INT, CONSTRAINT fk_c FOREIGN KEY (pid) REFERENCES p (id))", 1826,
		"Duplicate foreign key constraint name 'fk_c'")
	c.want("SHOW TABLES", "c", "g", "p", "p2", "r")

	c.fails("DROP TABLE p", 3730, "Cannot drop table 'p' referenced by a foreign key constraint 'fk_c' on table 'c'.")
	c.fails("TRUNCATE p", 1701, "Cannot truncate a table referenced in a foreign key constraint (`d`.`c`, CONSTRAINT `fk_c`)")
	c.fails("DROP INDEX fk_c ON c", 1553, "Cannot drop index 'fk_c': needed in a foreign key constraint")
	c.fails("ALTER TABLE c DROP COLUMN pid", 1828, "Cannot drop column 'pid': needed in a foreign key constraint 'fk_c'")
	c.fails("ALTER TABLE c DROP FOREIGN KEY nope", 1091, "Can't DROP 'nope'; check that column/key exists")

	// A database whose table another database's table references.
	c.exec("CREATE DATABASE e", "CREATE TABLE e.x (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES d.p (id))")
	c.fails("INSERT INTO e.x VALUES (1, 9)", 1452, msgChildFails+"(`e`.`x`, CONSTRAINT `x_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `d`.`p` (`id`))")
	c.fails("DROP DATABASE d", 3730, "Cannot drop table 'p' referenced by a foreign key constraint 'x_ibfk_1' on table 'x'.")
	c.exec("DROP DATABASE e")

	// Children first, then the parent, in one statement or in two.
	c.exec("DROP TABLE g, c", "DROP TABLE r", "DROP TABLE p")
	c.want("SHOW TABLES", "p2")
}

// TestForeignKeyAlterTable: ALTER TABLE ... ADD FOREIGN KEY checks the
// rows already there and adds the child's index when none fits; DROP
// FOREIGN KEY keeps the index, as InnoDB does.
func TestForeignKeyAlterTable(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d",
		"CREATE TABLE p (id INT PRIMARY KEY)", "INSERT INTO p VALUES (1), (2)",
		"CREATE TABLE q (id INT PRIMARY KEY, pid INT)", "INSERT INTO q VALUES (1, 2), (3, 9)")
	c.fails("ALTER TABLE q ADD CONSTRAINT q_fk FOREIGN KEY (pid) REFERENCES p (id)", 1452, msgChildFails+"(`d`.`q`, CONSTRAINT `q_fk`)")
	c.want("SELECT constraint_name FROM information_schema.referential_constraints WHERE constraint_schema = 'd'")
	c.exec("DELETE FROM q WHERE id = 3", "ALTER TABLE q ADD CONSTRAINT q_fk FOREIGN KEY (pid) REFERENCES p (id)")
	c.want("SHOW CREATE TABLE q", "q CREATE TABLE `q` (\n  `id` int NOT NULL,\n  `pid` int DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `q_fk` (`pid`),\n"+
		"  CONSTRAINT `q_fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	c.fails("INSERT INTO q VALUES (4, 5)", 1452, msgChildFails+"(`d`.`q`, CONSTRAINT `q_fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")
	c.exec("ALTER TABLE q DROP FOREIGN KEY q_fk", "INSERT INTO q VALUES (4, 5)")
	c.want("SELECT index_name, column_name FROM information_schema.statistics WHERE table_schema = 'd' AND table_name = 'q' ORDER BY index_name",
		"PRIMARY id", "q_fk pid")

	// An index that starts with the columns serves: none is added.
	c.exec("CREATE TABLE q2 (id INT PRIMARY KEY, pid INT, x INT, KEY k (pid, x))",
		"ALTER TABLE q2 ADD FOREIGN KEY (pid) REFERENCES p (id)")
	c.want("SELECT index_name FROM information_schema.statistics WHERE table_schema = 'd' AND table_name = 'q2' AND seq_in_index = 1 ORDER BY index_name",
		"k", "PRIMARY")
}

// TestForeignKeyChangeColumnRename: CHANGE COLUMN renaming a column of a
// foreign key, on the child's side and on the parent's (a primary key),
// renames it in the key too, as RENAME COLUMN does (it failed with 1235:
// GMS renames the key's column first, after which the table rewrite
// could not start); a type change of such a column stays refused.
func TestForeignKeyChangeColumnRename(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d",
		"CREATE TABLE p (id INT PRIMARY KEY, x INT)", "INSERT INTO p VALUES (1, 1)",
		"CREATE TABLE q (id INT PRIMARY KEY, pid INT, CONSTRAINT q_fk FOREIGN KEY (pid) REFERENCES p (id))",
		"INSERT INTO q VALUES (10, 1)",
		"ALTER TABLE q CHANGE COLUMN pid parent_id INT",
		"ALTER TABLE p CHANGE COLUMN id pk INT")
	c.want("SHOW CREATE TABLE q", "q CREATE TABLE `q` (\n  `id` int NOT NULL,\n  `parent_id` int DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `q_fk` (`parent_id`),\n"+
		"  CONSTRAINT `q_fk` FOREIGN KEY (`parent_id`) REFERENCES `p` (`pk`)\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	c.fails("INSERT INTO q VALUES (11, 2)", 1452, msgChildFails+"(`d`.`q`, CONSTRAINT `q_fk` FOREIGN KEY (`parent_id`) REFERENCES `p` (`pk`))")
	c.fails("DELETE FROM p WHERE pk = 1", 1451, msgParentFails+"(`d`.`q`, CONSTRAINT `q_fk` FOREIGN KEY (`parent_id`) REFERENCES `p` (`pk`))")
	c.exec("INSERT INTO p VALUES (2, 2)", "INSERT INTO q VALUES (11, 2)")
	c.want("SELECT q.id, p.x FROM q JOIN p ON q.parent_id = p.pk ORDER BY q.id", "10 1", "11 2")
	if _, err := c.c.ExecContext(context.Background(), "ALTER TABLE q CHANGE COLUMN parent_id parent_id BIGINT"); err == nil {
		t.Error("a type change of a foreign key's column succeeded")
	}
}

// TestForeignKeyMetadata: SHOW CREATE TABLE, information_schema's
// REFERENTIAL_CONSTRAINTS, KEY_COLUMN_USAGE and TABLE_CONSTRAINTS.
func TestForeignKeyMetadata(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec(fkSetup...)
	c.want("SHOW CREATE TABLE c", "c CREATE TABLE `c` (\n  `id` int NOT NULL,\n  `pid` int DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `fk_c` (`pid`),\n"+
		"  CONSTRAINT `fk_c` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE ON UPDATE CASCADE\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	c.want("SELECT constraint_name, unique_constraint_name, update_rule, delete_rule, table_name, referenced_table_name "+
		"FROM information_schema.referential_constraints WHERE constraint_schema = 'd' ORDER BY constraint_name",
		"fk_c PRIMARY CASCADE CASCADE c p", "g_ibfk_1 PRIMARY NO ACTION CASCADE g c", "r_ibfk_1 name NO ACTION NO ACTION r p")
	c.want("SELECT constraint_name, table_name, column_name, ordinal_position, position_in_unique_constraint, "+
		"referenced_table_schema, referenced_table_name, referenced_column_name FROM information_schema.key_column_usage "+
		"WHERE table_schema = 'd' AND referenced_table_name IS NOT NULL ORDER BY constraint_name",
		"fk_c c pid 1 1 d p id", "g_ibfk_1 g cid 1 1 d c id", "r_ibfk_1 r pname 1 1 d p name")
	c.want("SELECT constraint_name, table_name FROM information_schema.table_constraints "+
		"WHERE table_schema = 'd' AND constraint_type = 'FOREIGN KEY' ORDER BY constraint_name",
		"fk_c c", "g_ibfk_1 g", "r_ibfk_1 r")
}

// TestForeignKeyRestart: foreign keys are in the catalog and enforced
// after a restart.
func TestForeignKeyRestart(t *testing.T) {
	dir := t.TempDir()
	s := sqltest.Start(t, dir)
	c := connect(t, s, "")
	c.exec(fkSetup...)
	c.c.Close()
	s.Stop()

	s = sqltest.Start(t, dir)
	c = connect(t, s, "d")
	c.fails("INSERT INTO c VALUES (13, 9)", 1452, msgChildFails+fkcDesc)
	c.fails("DELETE FROM p WHERE id = 3", 1451, msgParentFails+fkrDesc)
	c.exec("DELETE FROM p WHERE id = 1")
	c.want("SELECT id FROM g ORDER BY id", "101")
	c.want("SELECT count(*) FROM information_schema.referential_constraints WHERE constraint_schema = 'd'", "3")
}

// TestForeignKeyChecksOff: with foreign_key_checks = 0, in the session
// or globally for new sessions, rows load in any order and a parent may
// be dropped and created again, as dumps do; turned on again, the keys
// are enforced (rows loaded meanwhile are not checked again, as in
// MySQL).
func TestForeignKeyChecksOff(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d", "SET foreign_key_checks = 0",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, CONSTRAINT fk FOREIGN KEY (pid) REFERENCES p (id))",
		"INSERT INTO c VALUES (1, 1), (2, 7)",
		"CREATE TABLE p (id INT PRIMARY KEY)", "INSERT INTO p VALUES (1)",
		"DELETE FROM p", "DROP TABLE p", "CREATE TABLE p (id INT PRIMARY KEY)", "INSERT INTO p VALUES (1), (2)",
		"SET foreign_key_checks = 1")
	const desc = "(`d`.`c`, CONSTRAINT `fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))"
	c.fails("INSERT INTO c VALUES (3, 3)", 1452, msgChildFails+desc)
	c.fails("DELETE FROM p WHERE id = 1", 1451, msgParentFails+desc)
	c.exec("INSERT INTO c VALUES (3, 2)")

	c.exec("SET GLOBAL foreign_key_checks = 0")
	c2 := connect(t, s, "d")
	c2.exec("INSERT INTO c VALUES (4, 99)", "DELETE FROM p WHERE id = 2")
	c.exec("SET GLOBAL foreign_key_checks = 1")
	c3 := connect(t, s, "d")
	c3.fails("INSERT INTO c VALUES (5, 98)", 1452, msgChildFails+desc)
	c3.want("SELECT id, pid FROM c ORDER BY id", "1 1", "2 7", "3 2", "4 99")
}

// TestForeignKeyConcurrentParentDelete: in optimistic transactions, a
// child inserted while another transaction deletes its parent would be a
// write skew under snapshot isolation; the reference check locks the
// parent row, so whichever commits second fails with 1213 and no child is
// left without a parent.
func TestForeignKeyConcurrentParentDelete(t *testing.T) {
	c, child, parent := parentAndChild(t)

	// The child's transaction commits second.
	child.exec("BEGIN OPTIMISTIC", "INSERT INTO c VALUES (1, 1)")
	parent.exec("BEGIN OPTIMISTIC", "DELETE FROM p WHERE id = 1", "COMMIT")
	_, err := child.c.ExecContext(context.Background(), "COMMIT")
	wantDeadlock(t, err)

	// The parent's transaction commits second.
	parent.exec("BEGIN OPTIMISTIC", "DELETE FROM p WHERE id = 2")
	child.exec("BEGIN OPTIMISTIC", "INSERT INTO c VALUES (2, 2)", "COMMIT")
	_, err = parent.c.ExecContext(context.Background(), "COMMIT")
	wantDeadlock(t, err)

	c.want("SELECT id FROM p", "2")
	c.want("SELECT id, pid FROM c", "2 2")
	c.want("SELECT count(*) FROM c WHERE pid NOT IN (SELECT id FROM p)", "0")
}

// parentAndChild starts a server with parent rows p 1 and 2 and an empty
// child table c referencing them, and returns an admin connection and
// two connections to database d.
func parentAndChild(t *testing.T) (admin, child, parent *triggerConn) {
	s := sqltest.Start(t, "")
	admin = connect(t, s, "")
	admin.exec("CREATE DATABASE d", "USE d", "CREATE TABLE p (id INT PRIMARY KEY)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
		"INSERT INTO p VALUES (1), (2)")
	return admin, connect(t, s, "d"), connect(t, s, "d")
}

// TestForeignKeyConcurrentParentDeletePessimistic: in pessimistic
// transactions (the default) the reference check's lock on the parent row
// makes the other transaction wait, as InnoDB's does, and its statement
// then sees the committed outcome: a parent delete after a child was
// inserted fails with 1451, a child insert after its parent was deleted
// with 1452, and no child is left without a parent.
func TestForeignKeyConcurrentParentDeletePessimistic(t *testing.T) {
	c, child, parent := parentAndChild(t)
	ctx := context.Background()
	// waiting runs q on o in the background and returns once it waits
	// for the lock the other transaction holds: its snapshot is older than
	// that transaction's commit, which it must see all the same.
	waiting := func(o *triggerConn, q string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := o.c.ExecContext(ctx, q)
			done <- err
		}()
		for {
			var n int
			if err := c.c.QueryRowContext(ctx, "SELECT count(*) FROM information_schema.DATA_LOCK_WAITS").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n > 0 {
				return done
			}
			select {
			case err := <-done:
				t.Fatalf("%s did not wait: %v", q, err)
			default:
			}
			runtime.Gosched()
		}
	}

	// The first transaction holds the parent row; the second's statement
	// waits for it, and after the first's commit fails as it must.
	for _, r := range []struct {
		first, second *triggerConn
		hold, wait    string
		want          uint16
	}{
		{child, parent, "INSERT INTO c VALUES (1, 1)", "DELETE FROM p WHERE id = 1", 1451},
		{parent, child, "DELETE FROM p WHERE id = 2", "INSERT INTO c VALUES (2, 2)", 1452},
	} {
		r.first.exec("BEGIN", r.hold)
		r.second.exec("BEGIN")
		done := waiting(r.second, r.wait)
		r.first.exec("COMMIT")
		if err := <-done; mysqlErrNum(err) != r.want {
			t.Fatalf("%s after %s committed: %v, want %d", r.wait, r.hold, err, r.want)
		}
		r.second.exec("COMMIT")
	}

	c.want("SELECT id FROM p", "1")
	c.want("SELECT id, pid FROM c", "1 1")
	c.want("SELECT count(*) FROM c WHERE pid NOT IN (SELECT id FROM p)", "0")
}

// wantDeadlock fails the test unless err is MySQL's 1213.
func wantDeadlock(t *testing.T, err error) {
	t.Helper()
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 1213 {
		t.Fatalf("COMMIT: %v, want error 1213", err)
	}
}

// TestForeignKeyFastPath: the statements the fast path runs leave tables
// with foreign keys, as child or as parent, to GMS, as text and as
// prepared statements.
func TestForeignKeyFastPath(t *testing.T) {
	d := newDiff(t, "USE d",
		"CREATE TABLE p (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0)",
		"CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
		"CREATE TABLE plain (id INT PRIMARY KEY, k INT NOT NULL DEFAULT 0)")
	d.checkTables = []string{"p", "c"}
	d.fastStep("INSERT INTO plain (id, k) VALUES (1, 1)")
	d.fastStep("UPDATE plain SET k = 5 WHERE id = 1")
	d.fastStep("DELETE FROM plain WHERE id = 1")

	hits := d.status("Percdb_fastpath_hits")
	d.step("INSERT INTO p (id, k) VALUES (1, 1)")
	d.step("INSERT INTO p (id, k) VALUES (?, ?)", 2, 2)
	d.step("INSERT INTO c (id, pid) VALUES (1, 1)")
	d.step("INSERT INTO c (id, pid) VALUES (?, ?)", 2, 2)
	d.step("INSERT INTO c (id, pid) VALUES (3, 7)")
	d.step("UPDATE c SET pid = 9 WHERE id = 1")
	d.stepPrepared("UPDATE c SET pid = ? WHERE id = ?", 8, 2)
	d.step("DELETE FROM p WHERE id = 1")
	d.stepPrepared("DELETE FROM p WHERE id = ?", 2)
	if got := d.status("Percdb_fastpath_hits"); got != hits {
		t.Errorf("the fast path ran %d statements on tables with foreign keys", got-hits)
	}

	// A table the fast path ran prepared statements on gets a child: they
	// leave it to GMS from then on.
	d.stepPrepared("INSERT INTO plain (id, k) VALUES (?, ?)", 5, 5)
	d.stepPrepared("DELETE FROM plain WHERE id = ?", 5)
	d.stepPrepared("INSERT INTO plain (id, k) VALUES (?, ?)", 6, 6)
	d.step("CREATE TABLE pc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES plain (id))")
	d.step("INSERT INTO pc VALUES (1, 6)")
	hits = d.status("Percdb_fastpath_hits")
	d.stepPrepared("DELETE FROM plain WHERE id = ?", 6)
	if got := d.status("Percdb_fastpath_hits"); got != hits {
		t.Errorf("the fast path deleted a parent row")
	}
	d.finish("p", "c", "plain", "pc")
}

// TestForeignKeyUpdateJoin: a multi-table UPDATE checks the child rows it
// changes and cascades the parent keys it changes; a multi-table DELETE
// cascades.
func TestForeignKeyUpdateJoin(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec(fkSetup...)
	c.exec("CREATE TABLE m (id INT PRIMARY KEY, v INT)", "INSERT INTO m VALUES (1, 1), (2, 9)")
	c.fails("UPDATE c JOIN m ON c.id - 9 = m.id SET c.pid = m.v", 1452, msgChildFails+fkcDesc)
	c.want("SELECT id, pid FROM c ORDER BY id", "10 1", "11 2", "12 NULL")
	c.exec("UPDATE p JOIN m ON p.id = m.id SET p.id = p.id + 100")
	c.want("SELECT id, pid FROM c ORDER BY id", "10 101", "11 102", "12 NULL")
	c.exec("INSERT INTO m VALUES (3, 0)")
	c.fails("UPDATE p AS x JOIN m ON x.id = m.id SET x.name = 'zz' WHERE x.id = 3", 1451, msgParentFails+fkrDesc)
	c.exec("DELETE p FROM p JOIN m ON p.id = m.id + 100")
	c.want("SELECT id, pid FROM c ORDER BY id", "12 NULL")
	c.want("SELECT count(*) FROM g", "0")
}

// TestForeignKeyAddUnderWriter: ALTER TABLE ... ADD FOREIGN KEY while a
// transaction that inserted a row without a parent is open. Left open,
// its COMMIT fails with 8028 once the DDL is done; committed while the
// DDL runs, the DDL, which fenced the table and waited for it before
// checking the rows, finds the row and fails with 1452. Either way no
// row without a parent is left under the key.
func TestForeignKeyAddUnderWriter(t *testing.T) {
	s := sqltest.StartConfig(t, percsql.Config{DDLWaitTimeout: 300 * time.Millisecond})
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d", "CREATE TABLE p (id INT PRIMARY KEY)", "INSERT INTO p VALUES (1)",
		"CREATE TABLE q (id INT PRIMARY KEY, pid INT, KEY (pid))", "INSERT INTO q VALUES (1, 1)")
	w := connect(t, s, "d")
	w.exec("BEGIN", "INSERT INTO q VALUES (2, 99)")
	c.exec("ALTER TABLE q ADD CONSTRAINT q_fk FOREIGN KEY (pid) REFERENCES p (id)")
	_, err := w.c.ExecContext(context.Background(), "COMMIT")
	if me, ok := mysqlError(err); !ok || me.Number != 8028 {
		t.Fatalf("COMMIT of the orphan: %v, want 8028", err)
	}
	c.want("SELECT id, pid FROM q", "1 1")
	c.fails("INSERT INTO q VALUES (2, 99)", 1452, msgChildFails+"(`d`.`q`, CONSTRAINT `q_fk` FOREIGN KEY (`pid`) REFERENCES `p` (`id`))")

	// The writer commits while the DDL runs (it waits for the writer for
	// up to 30 s).
	s = sqltest.StartConfig(t, percsql.Config{DDLWaitTimeout: 30 * time.Second})
	c = connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d", "CREATE TABLE p (id INT PRIMARY KEY)", "INSERT INTO p VALUES (1)",
		"CREATE TABLE q (id INT PRIMARY KEY, pid INT, KEY (pid))", "INSERT INTO q VALUES (1, 1)")
	w = connect(t, s, "d")
	w.exec("BEGIN", "INSERT INTO q VALUES (2, 99)")
	ddl := connect(t, s, "d")
	done := make(chan error, 1)
	go func() {
		_, err := ddl.c.ExecContext(context.Background(), "ALTER TABLE q ADD CONSTRAINT q_fk FOREIGN KEY (pid) REFERENCES p (id)")
		done <- err
	}()
	for running := false; !running; {
		for _, r := range c.query("SELECT info FROM information_schema.processlist") {
			running = running || strings.HasPrefix(r[0], "ALTER TABLE q")
		}
	}
	w.exec("COMMIT")
	err = <-done
	if me, ok := mysqlError(err); !ok || me.Number != 1452 {
		t.Fatalf("ALTER TABLE after the orphan's commit: %v, want 1452", err)
	}
	c.want("SELECT count(*) FROM information_schema.referential_constraints WHERE constraint_schema = 'd'", "0")
}
