package protocol

import (
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// TestGenerationExpression checks information_schema.COLUMNS of
// generated columns as MySQL 8 answers it: GENERATION_EXPRESSION is the
// expression as SHOW CREATE TABLE writes it (GMS left it empty), EXTRA
// says VIRTUAL or STORED GENERATED, and other columns have ”.
func TestGenerationExpression(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		db := openOne(t, s, "")
		mustExec(t, db, "CREATE TABLE gx (a INT PRIMARY KEY, b INT, c INT AS (a + b), d INT AS (a * 2) STORED)")
		rows, err := db.Query("SELECT COLUMN_NAME, GENERATION_EXPRESSION, EXTRA FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION", "gx")
		if err != nil {
			t.Fatal(err)
		}
		want := "a||\nb||\nc|(`a` + `b`)|VIRTUAL GENERATED\nd|(`a` * 2)|STORED GENERATED"
		if got := scanRows(t, rows); got != want {
			t.Errorf("information_schema.COLUMNS:\n%s\nwant\n%s", got, want)
		}
	})
}
