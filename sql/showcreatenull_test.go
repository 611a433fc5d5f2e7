package sql_test

import (
	"testing"

	"github.com/percdb/percdb/sql/sqltest"
)

// TestShowCreateTableDefaultNull: SHOW CREATE TABLE writes DEFAULT NULL
// after a nullable column without a default, and NULL before a nullable
// TIMESTAMP's default, as MySQL 8 does (its manual's example: `s`
// char(60) DEFAULT NULL); not after a BLOB or TEXT, a generated or an
// AUTO_INCREMENT column. GMS wrote neither. An ENUM's or SET's default
// is written as its members, not as their number.
func TestShowCreateTableDefaultNull(t *testing.T) {
	s := sqltest.Start(t, "")
	c := connect(t, s, "")
	c.exec("CREATE DATABASE d", "USE d",
		"CREATE TABLE t (id INT PRIMARY KEY AUTO_INCREMENT, v INT, s CHAR(60) COMMENT 'c', t TIMESTAMP NULL, "+
			"t2 TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3), b BLOB, j JSON, x TEXT, "+
			"e ENUM('a','b'), d2 INT DEFAULT NULL, d3 INT DEFAULT 5, g INT AS (v + 1), n INT NOT NULL)")
	c.want("SHOW CREATE TABLE t", "t CREATE TABLE `t` (\n"+
		"  `id` int NOT NULL AUTO_INCREMENT,\n"+
		"  `v` int DEFAULT NULL,\n"+
		"  `s` char(60) DEFAULT NULL COMMENT 'c',\n"+
		"  `t` timestamp NULL DEFAULT NULL,\n"+
		"  `t2` timestamp(3) NULL DEFAULT CURRENT_TIMESTAMP(3) ON UPDATE CURRENT_TIMESTAMP(3),\n"+
		"  `b` blob,\n"+
		"  `j` json DEFAULT NULL,\n"+
		"  `x` text,\n"+
		"  `e` enum('a','b') DEFAULT NULL,\n"+
		"  `d2` int DEFAULT NULL,\n"+
		"  `d3` int DEFAULT '5',\n"+
		"  `g` int GENERATED ALWAYS AS ((`v` + 1)) VIRTUAL,\n"+
		"  `n` int NOT NULL,\n"+
		"  PRIMARY KEY (`id`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	// ENUM and SET defaults as their members (GMS wrote the number:
	// DEFAULT '2' for 'b c').
	c.exec("CREATE TABLE u (id INT PRIMARY KEY, e ENUM('a','b c') NOT NULL DEFAULT 'b c', s SET('x','y','z') DEFAULT 'x,z', " +
		"e2 ENUM('p','q'), e3 ENUM('m','n') NOT NULL)")
	c.want("SHOW CREATE TABLE u", "u CREATE TABLE `u` (\n"+
		"  `id` int NOT NULL,\n"+
		"  `e` enum('a','b c') NOT NULL DEFAULT 'b c',\n"+
		"  `s` set('x','y','z') DEFAULT 'x,z',\n"+
		"  `e2` enum('p','q') DEFAULT NULL,\n"+
		"  `e3` enum('m','n') NOT NULL,\n"+
		"  PRIMARY KEY (`id`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
	// The statement creates the same table again.
	c.exec("CREATE DATABASE d2", "USE d2",
		"CREATE TABLE t (id INT PRIMARY KEY, v INT DEFAULT NULL, t TIMESTAMP NULL DEFAULT NULL)")
	c.want("SHOW CREATE TABLE t", "t CREATE TABLE `t` (\n"+
		"  `id` int NOT NULL,\n"+
		"  `v` int DEFAULT NULL,\n"+
		"  `t` timestamp NULL DEFAULT NULL,\n"+
		"  PRIMARY KEY (`id`)\n"+
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci")
}
