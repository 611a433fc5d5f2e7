package loaddata

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/vt/sqlparser"
)

// LOAD DATA [LOCAL] INFILE is GMS's: it parses the file as the statement
// describes (FIELDS TERMINATED, ENCLOSED and ESCAPED BY, LINES STARTING
// and TERMINATED BY, IGNORE n LINES, a column list with user variables,
// SET) and inserts the rows through the table's inserter, in the
// session's transaction like any INSERT. With LOCAL the client sends the
// file (vitess asks for it in the protocol's LOCAL INFILE request), and
// GMS allows that only while the global variable local_infile is on.
// GMS's default is off, as MySQL 8's; percdb turns it on at start unless
// Config.DisableLocalInfile (percdb --local-infile=false), as MariaDB
// does, so that clients started with --local-infile=1 and drivers that
// allow local files (go-sql-driver's RegisterLocalFile,
// allowLoadLocalInfile in Connector/J) load without an administrator's
// SET GLOBAL first. GMS keeps its global variables in one registry of the
// process, so servers of one process share the setting.

// localInfileVar is the global system variable that allows LOAD DATA
// LOCAL.
const localInfileVar = "local_infile"

// SetLocalInfile sets the global local_infile variable.
func SetLocalInfile(on bool) error {
	v := int8(0)
	if on {
		v = 1
	}
	if err := gsql.SystemVariables.AssignValues(map[string]any{localInfileVar: v}); err != nil {
		return fmt.Errorf("set %s: %w", localInfileVar, err)
	}
	return nil
}

// GMS's reading of the file is not MySQL's: it splits a line at every
// field terminator, quoted or not ("Smith, J" became two fields), fails
// on a field that is not enclosed under OPTIONALLY ENCLOSED BY, drops
// escape characters instead of decoding them (\t, \n, \\ lost their
// meaning), ignores doubled enclosing characters, and splits lines at a
// line terminator inside quotes; an empty field of a number column
// became NULL, and a SET expression read the file's fields where it
// named the table's columns. percdb's row-iterator builder therefore
// builds a LOAD DATA's rows itself (loadDataIter), with a reader of
// MySQL's format (loadReader), and leaves the writing to GMS's INSERT as
// before: duplicates, IGNORE, REPLACE, checks, triggers and the
// session's transaction are the INSERT's.

// loadField is one field of a line of a LOAD DATA file.
type loadField struct {
	val  string
	null bool
}

// loadFormat is how a LOAD DATA file is written: its FIELDS and LINES
// clauses.
type loadFormat struct {
	fieldTerm, lineTerm, lineStart []byte
	// enclose and escape are the ENCLOSED BY and ESCAPED BY characters,
	// when hasEnclose and hasEscape.
	enclose, escape       byte
	hasEnclose, hasEscape bool
}

// loadReader reads the lines of a LOAD DATA file as fields.
type loadReader struct {
	f      loadFormat
	r      *bufio.Reader
	buf    []byte
	fields []loadField
}

func newLoadReader(r io.Reader, f loadFormat) *loadReader {
	return &loadReader{f: f, r: bufio.NewReaderSize(r, 64<<10)}
}

// at reports whether the input continues with term (never for an empty
// term), without consuming it.
func (l *loadReader) at(term []byte) bool {
	if len(term) == 0 {
		return false
	}
	b, _ := l.r.Peek(len(term))
	return bytes.Equal(b, term)
}

// skip consumes n bytes the reader has peeked at.
func (l *loadReader) skip(n int) { _, _ = l.r.Discard(n) }

// eof reports whether the input is at its end, or the error that
// stopped it.
func (l *loadReader) eof() (bool, error) {
	_, err := l.r.Peek(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// line returns the fields of the next line, io.EOF after the last. A
// line without LINES STARTING BY's prefix is skipped; the prefix and
// what precedes it on its line are not part of the first field.
func (l *loadReader) line() ([]loadField, error) {
	if eof, err := l.eof(); eof || err != nil {
		if err == nil {
			err = io.EOF
		}
		return nil, err
	}
	if len(l.f.lineStart) > 0 {
		for !l.at(l.f.lineStart) {
			if l.at(l.f.lineTerm) {
				l.skip(len(l.f.lineTerm))
			} else if _, err := l.r.ReadByte(); err != nil {
				return nil, err
			}
			if eof, err := l.eof(); eof || err != nil {
				if err == nil {
					err = io.EOF
				}
				return nil, err
			}
		}
		l.skip(len(l.f.lineStart))
	}
	l.fields = l.fields[:0]
	for {
		f, end, err := l.field()
		if err != nil {
			return nil, err
		}
		l.fields = append(l.fields, f)
		if end {
			return l.fields, nil
		}
	}
}

// field reads one field and reports whether it ended its line.
func (l *loadReader) field() (f loadField, endOfLine bool, err error) {
	l.buf = l.buf[:0]
	enclosed := l.f.hasEnclose && l.at([]byte{l.f.enclose})
	if enclosed {
		l.skip(1)
	}
	// escapedN: the field so far is the escape character and N, which
	// alone is NULL.
	escapedN, raw := false, 0
	for {
		if !enclosed {
			if l.at(l.f.fieldTerm) {
				l.skip(len(l.f.fieldTerm))
				break
			}
			if l.at(l.f.lineTerm) {
				l.skip(len(l.f.lineTerm))
				endOfLine = true
				break
			}
		}
		b, err := l.r.ReadByte()
		if err == io.EOF {
			endOfLine = true
			break
		}
		if err != nil {
			return loadField{}, false, err
		}
		raw++
		switch {
		case l.f.hasEscape && b == l.f.escape:
			c, err := l.r.ReadByte()
			if err == io.EOF {
				l.buf = append(l.buf, b)
				continue
			}
			if err != nil {
				return loadField{}, false, err
			}
			raw++
			escapedN = c == 'N' && raw == 2
			l.buf = append(l.buf, unescapeLoad(c))
		case enclosed && b == l.f.enclose:
			if l.at([]byte{l.f.enclose}) { // doubled: one enclosing character
				l.skip(1)
				l.buf = append(l.buf, b)
				continue
			}
			if eof, err := l.eof(); eof || err != nil {
				return loadField{val: string(l.buf)}, true, err
			}
			if l.at(l.f.fieldTerm) {
				l.skip(len(l.f.fieldTerm))
				return loadField{val: string(l.buf)}, false, nil
			}
			if l.at(l.f.lineTerm) {
				l.skip(len(l.f.lineTerm))
				return loadField{val: string(l.buf)}, true, nil
			}
			l.buf = append(l.buf, b)
		default:
			l.buf = append(l.buf, b)
		}
	}
	if enclosed {
		// The file ended inside quotes: the field is what was read.
		return loadField{val: string(l.buf)}, endOfLine, nil
	}
	if escapedN && len(l.buf) == 1 {
		return loadField{null: true}, endOfLine, nil
	}
	if (l.f.hasEnclose || !l.f.hasEscape) && string(l.buf) == "NULL" {
		return loadField{null: true}, endOfLine, nil
	}
	return loadField{val: string(l.buf)}, endOfLine, nil
}

// unescapeLoad returns the character that the escape character followed
// by c stands for.
func unescapeLoad(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 0x1a
	}
	return c
}

// loadDataIter returns the rows of a LOAD DATA statement for GMS's
// INSERT: one per line of the file, with the values of the insert's
// columns (ld.ColNames, or the table's columns when the statement lists
// none) in that order.
type loadDataIter struct {
	ld     *plan.LoadData
	reader io.ReadCloser
	lines  *loadReader
	// targets are the statement's column list in order: a column's index
	// in ld.DestSch, or -1 for a user variable (named in vars).
	targets []int
	vars    []string
	// out is the index in ld.DestSch of each value of a returned row.
	out    []int
	ignore int64
	// rows counts the rows read so far, which the process list shows
	// (stopProgress ends that).
	rows         atomic.Int64
	report       ProgressReporter
	stopProgress func()
}

// ProgressReporter shows a statement's progress (what progress returns)
// in the process list of the session of ctx until stop is called (the
// process list is package sql's).
type ProgressReporter func(ctx context.Context, progress func() string) (stop func())

// Build returns the iterator of n, or nil when percdb leaves the
// statement to GMS (its text is not one LOAD DATA statement); report
// shows how many rows it has read.
func Build(ctx *gsql.Context, n *plan.LoadData, report ProgressReporter) (gsql.RowIter, error) {
	stmt, _, err := sqlparser.ParseOne(ctx, ctx.Query())
	if err != nil {
		return nil, nil
	}
	load, ok := stmt.(*sqlparser.Load)
	if !ok {
		return nil, nil
	}
	sch := n.DestSch
	it := &loadDataIter{ld: n, ignore: n.IgnoreNum, report: report}
	if len(load.Columns) == 0 {
		for i := range sch {
			it.targets = append(it.targets, i)
			it.vars = append(it.vars, "")
		}
	}
	for _, c := range load.Columns {
		name := c.String()
		if strings.HasPrefix(name, "@") && sch.IndexOfColName(name) < 0 {
			it.targets = append(it.targets, -1)
			it.vars = append(it.vars, strings.TrimPrefix(name, "@"))
			continue
		}
		i := sch.IndexOfColName(name)
		if i < 0 {
			return nil, gsql.ErrTableColumnNotFound.New(load.Table.Name.String(), name)
		}
		it.targets = append(it.targets, i)
		it.vars = append(it.vars, "")
	}
	names := n.ColNames
	if len(names) == 0 {
		names = make([]string, len(sch))
		for i, c := range sch {
			names[i] = c.Name
		}
	}
	for _, name := range names {
		i := sch.IndexOfColName(name)
		if i < 0 {
			return nil, gsql.ErrTableColumnNotFound.New(load.Table.Name.String(), name)
		}
		it.out = append(it.out, i)
	}
	format, err := loadFormatOf(n)
	if err != nil {
		return nil, err
	}
	if it.reader, err = openLoadFile(ctx, n); err != nil {
		return nil, err
	}
	it.lines = newLoadReader(it.reader, format)
	return it, nil
}

// loadFormatOf returns the file format n's FIELDS and LINES clauses give.
func loadFormatOf(n *plan.LoadData) (loadFormat, error) {
	f := loadFormat{
		fieldTerm: []byte(n.FieldsTerminatedBy),
		lineTerm:  []byte(n.LinesTerminatedBy),
		lineStart: []byte(n.LinesStartingBy),
	}
	if len(n.FieldsEnclosedBy) > 1 || len(n.FieldsEscapedBy) > 1 {
		return f, gsql.ErrUnexpectedSeparator.New()
	}
	if n.FieldsEnclosedBy != "" {
		f.enclose, f.hasEnclose = n.FieldsEnclosedBy[0], true
	}
	if n.FieldsEscapedBy != "" {
		f.escape, f.hasEscape = n.FieldsEscapedBy[0], true
	}
	if len(f.lineTerm) == 0 {
		f.lineTerm = []byte("\n")
	}
	return f, nil
}

// openLoadFile opens the file of n: the client's for LOCAL, which GMS
// allows only while local_infile is on; the server's otherwise, inside
// secure_file_priv when that is set.
func openLoadFile(ctx *gsql.Context, n *plan.LoadData) (io.ReadCloser, error) {
	if n.Local {
		if _, v, ok := gsql.SystemVariables.GetGlobal(localInfileVar); !ok || !isOn(v) {
			return nil, errLocalInfileOff
		}
		return ctx.LoadInfile(n.File)
	}
	if _, dir, ok := gsql.SystemVariables.GetGlobal("secure_file_priv"); ok {
		if d, _ := dir.(string); d != "" {
			abs, err := filepath.Abs(n.File)
			if err != nil {
				return nil, gsql.ErrLoadDataCannotOpen.New(err.Error())
			}
			root, err := filepath.Abs(d)
			if err != nil || !strings.HasPrefix(abs, root+string(filepath.Separator)) {
				return nil, gsql.ErrSecureFilePriv.New()
			}
		}
	}
	f, err := os.Open(n.File)
	if err != nil {
		return nil, gsql.ErrLoadDataCannotOpen.New(err.Error())
	}
	return f, nil
}

// errLocalInfileOff is MySQL's ER_CLIENT_LOCAL_FILES_DISABLED.
var errLocalInfileOff = mysql.NewSQLError(3948, mysql.SSClientError, "Loading local data is disabled; this must be enabled on both the client and server sides")

// isOn reports whether a boolean system variable's value v is on.
func isOn(v any) bool {
	on, err := gsql.ConvertToBool(nil, v)
	return err == nil && on
}

// Next implements sql.RowIter.
func (it *loadDataIter) Next(ctx *gsql.Context) (gsql.Row, error) {
	if it.stopProgress == nil {
		it.stopProgress = it.report(ctx, func() string { return fmt.Sprintf("loading data: %d rows read", it.rows.Load()) })
	}
	for ; it.ignore > 0; it.ignore-- {
		if _, err := it.lines.line(); err != nil {
			return nil, err
		}
	}
	fields, err := it.lines.line()
	if err != nil {
		return nil, err
	}
	sch := it.ld.DestSch
	// row holds the table's columns as the file sets them, for the SET
	// expressions (which name the table's columns) and the result.
	row := make(gsql.Row, len(sch))
	given := make([]bool, len(sch))
	for i, t := range it.targets {
		var f loadField
		if i < len(fields) {
			f = fields[i]
		} else if t >= 0 {
			continue // a short line: the column's default
		} else {
			f.null = true
		}
		if t < 0 {
			var v any
			typ := gsql.Type(types.Null)
			if !f.null {
				v, typ = f.val, types.LongText
			}
			if err := ctx.SetUserVariable(ctx, it.vars[i], v, typ); err != nil {
				return nil, err
			}
			continue
		}
		given[t] = true
		switch {
		case f.null:
			row[t] = nil
		case f.val == "" && !types.IsText(sch[t].Type):
			// MySQL: an empty field is the type's zero value (0, the
			// zero date), not NULL.
			row[t] = sch[t].Type.Zero()
		default:
			row[t] = f.val
		}
	}
	for i, col := range sch {
		if given[i] || (it.ld.SetExprs != nil && it.ld.SetExprs[i] != nil) {
			continue
		}
		if v, err := columnDefault(ctx, col, row); err != nil {
			return nil, err
		} else {
			row[i] = v
		}
	}
	for i, e := range it.ld.SetExprs {
		if e == nil {
			continue
		}
		v, err := e.Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		row[i] = v
	}
	out := make(gsql.Row, len(it.out))
	for i, c := range it.out {
		out[i] = row[c]
	}
	it.rows.Add(1)
	return out, nil
}

// columnDefault is the value of a column the file gives no value: its
// default, NULL when it has none and may be NULL, else its type's zero.
func columnDefault(ctx *gsql.Context, col *gsql.Column, row gsql.Row) (any, error) {
	switch {
	case col.Default != nil:
		return col.Default.Eval(ctx, row)
	case col.Nullable || col.AutoIncrement:
		return nil, nil
	default:
		return col.Type.Zero(), nil
	}
}

// Close implements sql.RowIter.
func (it *loadDataIter) Close(*gsql.Context) error {
	if it.stopProgress != nil {
		it.stopProgress()
	}
	return it.reader.Close()
}
