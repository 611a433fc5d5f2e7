package foreignkey

import (
	"strings"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/sql/catalog"
)

// TestNames: an unnamed key gets InnoDB's <table>_ibfk_<n>, n one above
// the highest in use (by existing keys or by earlier keys of the same
// statement); named keys keep their names.
func TestNames(t *testing.T) {
	defs := []*gsql.ForeignKeyConstraint{{}, {Name: "t_ibfk_7"}, {}, {Name: "mine"}}
	got := strings.Join(foreignKeyNames("T", []string{"t_ibfk_2", "other_ibfk_9"}, defs), " ")
	if want := "t_ibfk_3 t_ibfk_7 t_ibfk_8 mine"; got != want {
		t.Fatalf("names: got %q, want %q", got, want)
	}
}

// TestErrorCodes: GMS's foreign key errors become MySQL's codes and
// messages; other errors pass unchanged.
func TestErrorCodes(t *testing.T) {
	cat := catalog.New(1)
	for _, c := range []struct {
		err  error
		code int
		msg  string
	}{
		{gsql.ErrForeignKeyDropColumn.New("pid", "c_p"), 1828, "Cannot drop column 'pid': needed in a foreign key constraint 'c_p'"},
		{gsql.ErrForeignKeyDropIndex.New("ix", "c_p"), 1553, "Cannot drop index 'ix': needed in a foreign key constraint"},
		{gsql.ErrForeignKeyDepthLimit.New(), 3008, "Foreign key cascade delete/update exceeds max depth of 15."},
		{gsql.ErrForeignKeyNotFound.New("nokey", "t"), 1091, "Can't DROP 'nokey'; check that column/key exists"},
	} {
		err := Error(cat, "d", c.err)
		se, ok := err.(*mysql.SQLError)
		if !ok || se.Num != c.code || se.Message != c.msg {
			t.Errorf("%v: got %v, want %d %q", c.err, err, c.code, c.msg)
		}
	}
	other := gsql.ErrTableNotFound.New("t")
	if err := Error(cat, "d", other); err != other {
		t.Errorf("another error: got %v, want it unchanged", err)
	}
}
