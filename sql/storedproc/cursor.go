package storedproc

import (
	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// cursor is a DECLARE ... CURSOR. OPEN reads all its rows, as MySQL
// materialises a cursor's result: the statements the loop runs (each
// committed on its own in autocommit) do not end the read.
type cursor struct {
	query ast.SelectStatement
	open  bool
	sch   gsql.Schema
	rows  []gsql.Row
}

// findCursor returns cursor name declared in sc or around it.
func findCursor(sc *scope, name string) (*cursor, error) {
	if c := declared(sc, name, func(s *scope) map[string]*cursor { return s.cursors }); c != nil {
		return c, nil
	}
	return nil, mysql.NewSQLError(1324, "42000", "Undefined CURSOR: %s", name)
}

// openCursor returns cursor name, which must be open.
func openCursor(sc *scope, name string) (*cursor, error) {
	c, err := findCursor(sc, name)
	if err != nil {
		return nil, err
	}
	if !c.open {
		return nil, mysql.NewSQLError(1326, "24000", "Cursor is not open")
	}
	return c, nil
}

// open runs OPEN name.
func (f *frame) open(name string, sc *scope) error {
	c, err := findCursor(sc, name)
	if err != nil {
		return err
	}
	if c.open {
		return mysql.NewSQLError(1325, "24000", "Cursor is already open")
	}
	f.bind(sc, c.query)
	sch, rows, err := f.query(c.query)
	if err != nil {
		return err
	}
	c.open, c.sch, c.rows = true, sch, rows
	return nil
}

// fetch runs FETCH name INTO variables.
func (f *frame) fetch(st *ast.FetchCursor, sc *scope) error {
	c, err := openCursor(sc, st.Name)
	if err != nil {
		return err
	}
	if len(st.Variables) != len(c.sch) {
		return mysql.NewSQLError(1328, "HY000", "Incorrect number of FETCH variables")
	}
	if len(c.rows) == 0 {
		return errNoData()
	}
	row := c.rows[0]
	c.rows = c.rows[1:]
	for i, name := range st.Variables {
		if err := f.assign(sc, name, row[i], c.sch[i].Type); err != nil {
			return err
		}
	}
	return nil
}
