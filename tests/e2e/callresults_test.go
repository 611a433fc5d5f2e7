package e2e

import "testing"

// pymysqlCall is a PyMySQL program that reads a stored procedure's result
// sets as applications do: one per SELECT of the body, then the CALL's
// own (empty) result, with Cursor.nextset(); a SIGNAL after a result set
// raises after that result set was read.
const pymysqlCall = `
import sys, pymysql
host, port = sys.argv[1], int(sys.argv[2])
conn = pymysql.connect(host=host, port=port, user="root", autocommit=True)
with conn.cursor() as c:
    c.execute("CREATE DATABASE pc")
    c.execute("USE pc")
    c.execute("CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))")
    c.execute("INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    c.execute("CREATE PROCEDURE two(IN lim INT) BEGIN SELECT COUNT(*) AS n FROM t; SELECT id, v FROM t WHERE id <= lim ORDER BY id; END")
    c.execute("CREATE PROCEDURE fails() BEGIN SELECT 'before' AS s; SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'stopped'; END")
    c.callproc("two", (2,))
    sets = [c.fetchall()]
    while c.nextset():
        sets.append(c.fetchall())
    print("callproc", sets)
    c.execute("CALL two(1)")
    print("first", c.description[0][0], c.fetchall())
    print("more", c.nextset(), c.description[0][0], c.fetchall())
    print("end", c.nextset(), c.description, c.nextset())
    try:
        c.execute("CALL fails()")
        print("fails first", c.fetchall())
        c.nextset()
        print("no error")
    except pymysql.err.OperationalError as e:
        print("error", e.args)
    c.execute("SELECT 1")
    print("after", c.fetchall())
`

// TestPyMySQLCallResultSets runs pymysqlCall against percdb.
func TestPyMySQLCallResultSets(t *testing.T) {
	checkPyMySQL(t, pymysqlCall,
		"callproc [((2,),), ((1, 'a'), (2, 'b')), ()]",
		"first n ((2,),)",
		"more True id ((1, 'a'),)",
		"end True None None",
		"fails first (('before',),)",
		"error (1644, 'stopped')",
		"after ((1,),)",
	)
}
