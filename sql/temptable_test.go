package sql_test

import (
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestTemporaryTables: a temporary table belongs to its session, shadows
// a table of the same name there, is written in the session's
// transactions, takes indexes, and goes with DROP TABLE or the session.
func TestTemporaryTables(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d", "CREATE TABLE t (id INT PRIMARY KEY, v INT)", "INSERT INTO t VALUES (1, 1)",
		"CREATE TEMPORARY TABLE t (id INT PRIMARY KEY, w VARCHAR(10), KEY (w))",
		"INSERT INTO t VALUES (5, 'x'), (6, 'y')")
	c.want("SELECT id, w FROM t ORDER BY id", "5 x", "6 y")
	c.want("SHOW CREATE TABLE t", "t CREATE TEMPORARY TABLE `t` (\n  `id` int NOT NULL,\n  `w` varchar(10) DEFAULT NULL,\n  PRIMARY KEY (`id`),\n  KEY `w` (`w`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	c.fails("CREATE TEMPORARY TABLE t (id INT)", 1050, "table with name t already exists")

	// Other sessions see the permanent table, and no temporary one.
	o := connect(t, s, "d")
	o.want("SELECT id, v FROM t", "1 1")
	c.exec("CREATE TEMPORARY TABLE only_mine (id INT)")
	o.fails("SELECT * FROM only_mine", 1146, "Table 'd.only_mine' doesn't exist")
	o.want("SHOW TABLES", "t")

	// Rolled back with the transaction; indexed; keyless; AUTO_INCREMENT.
	c.exec("BEGIN", "INSERT INTO t VALUES (7, 'z')", "ROLLBACK")
	c.want("SELECT id FROM t WHERE w = 'z'")
	c.want("SELECT id FROM t WHERE w = 'y'", "6")
	c.exec("CREATE TEMPORARY TABLE k (a INT, b INT)", "INSERT INTO k VALUES (1, 2), (1, 2)",
		"UPDATE k SET b = 3 LIMIT 1", "CREATE INDEX kb ON k (b)")
	c.want("SELECT a, b FROM k WHERE b = 3", "1 3")
	c.want("SELECT count(*) FROM k", "2")
	c.exec("CREATE TEMPORARY TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT)", "INSERT INTO ai (v) VALUES (1), (2)",
		"TRUNCATE ai", "INSERT INTO ai (v) VALUES (3)", "ALTER TABLE ai RENAME TO ai2")
	c.want("SELECT id, v FROM ai2", "1 3")
	// Fast-path shapes on a shadowed table of the same columns (run
	// twice: the fast path learns a statement from its first run) read
	// and write the temporary table.
	c.exec("CREATE TABLE s2 (id INT PRIMARY KEY, v INT)", "INSERT INTO s2 VALUES (1, 100)",
		"CREATE TEMPORARY TABLE s2 (id INT PRIMARY KEY, v INT)", "INSERT INTO s2 VALUES (1, 200)")
	for i := 0; i < 3; i++ {
		c.want("SELECT v FROM s2 WHERE id = 1", "200")
		o.want("SELECT v FROM s2 WHERE id = 1", "100")
		c.exec("UPDATE s2 SET v = 200 WHERE id = 1", "DELETE FROM s2 WHERE id = 2", "INSERT INTO s2 (id, v) VALUES (2, 2)")
	}
	o.want("SELECT id, v FROM s2", "1 100")

	c.fails("CREATE TEMPORARY TABLE f (id INT PRIMARY KEY, tid INT, FOREIGN KEY (tid) REFERENCES t (id))", 1215, "Cannot add foreign key constraint")
	c.fails("SELECT * FROM f", 1146, "Table 'd.f' doesn't exist")
	c.fails("CREATE TEMPORARY TABLE f2 AS SELECT nope FROM s2", 1054, "column \"nope\" could not be found in any table in scope")
	c.fails("SELECT * FROM f2", 1146, "Table 'd.f2' doesn't exist")
	// Column changes rewrite the temporary table; a failed one leaves it.
	c.exec("ALTER TABLE k ADD COLUMN c INT DEFAULT 7", "ALTER TABLE k MODIFY b BIGINT NOT NULL", "CREATE UNIQUE INDEX ua ON ai2 (v)")
	c.want("SELECT a, b, c FROM k ORDER BY b", "1 2 7", "1 3 7")
	c.exec("INSERT INTO k (a, b) VALUES (NULL, 5)")
	c.fails("ALTER TABLE k MODIFY a INT NOT NULL", 1048, "Column 'a' cannot be null")
	c.want("SELECT a, b, c FROM k ORDER BY b", "1 2 7", "1 3 7", "NULL 5 7")
	c.want("SHOW CREATE TABLE k", "k CREATE TEMPORARY TABLE `k` (\n  `a` int DEFAULT NULL,\n  `b` bigint NOT NULL,\n  `c` int DEFAULT '7',\n  KEY `kb` (`b`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")

	// A temporary table that shadows a table of a foreign key would be
	// taken for it: writes through such a key are refused.
	c.exec("CREATE TABLE fp (id INT PRIMARY KEY)", "CREATE TABLE fc (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES fp (id))",
		"INSERT INTO fp VALUES (1)", "CREATE TEMPORARY TABLE fp (id INT PRIMARY KEY)", "INSERT INTO fp VALUES (2)")
	const shadowed = "unsupported feature: writing through foreign key fc_ibfk_1 while a temporary table shadows its table fp"
	c.fails("INSERT INTO fc VALUES (1, 2)", 1235, shadowed)
	c.fails("UPDATE fc SET pid = 2", 1235, shadowed)
	c.exec("DROP TEMPORARY TABLE fp", "INSERT INTO fc VALUES (1, 1)")
	c.fails("INSERT INTO fc VALUES (2, 2)", 1452, msgChildFails+"(`d`.`fc`, CONSTRAINT `fc_ibfk_1` FOREIGN KEY (`pid`) REFERENCES `fp` (`id`))")

	// DROP TABLE drops the temporary table first; DROP TEMPORARY TABLE
	// never drops a permanent one.
	c.exec("DROP TABLE t")
	c.want("SELECT id, v FROM t", "1 1")
	c.fails("DROP TEMPORARY TABLE t", 1051, "Unknown table 't'")
	c.want("SELECT id, v FROM t", "1 1")

	// Gone with the session.
	c.c.Close()
	c = connect(t, s, "d")
	c.fails("SELECT * FROM k", 1146, "Table 'd.k' doesn't exist")
	c.want("SELECT id, v FROM t", "1 1")
}
