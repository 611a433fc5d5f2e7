package sql

import (
	"strconv"
	"strings"
	"sync"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/compat"
	"github.com/percdb/percdb/sql/internal/lexical"
	"github.com/percdb/percdb/sql/storedproc"
)

// MySQL's diagnostics area outside stored programs: the conditions of the
// last statement, which SHOW WARNINGS lists (GMS does) and which
// @@warning_count and @@error_count, SHOW ERRORS, SHOW COUNT(*) WARNINGS
// | ERRORS and GET [CURRENT] DIAGNOSTICS read. GMS v0.20.0 has none of
// those: @@warning_count was 1105 "Unknown system variable", SHOW ERRORS
// and SHOW COUNT(*) 1235, and a top-level GET DIAGNOSTICS answered with
// the marker row sql/storedproc puts in its place and assigned nothing.
//
// GMS clears the warnings before it runs a statement, so the handler
// keeps the conditions the previous statement left (beginDiagnostics)
// for the statements that read them: @@warning_count in a SELECT reads
// the previous statement's count, as MySQL's does (MySQL clears the area
// only for a statement that uses tables). SHOW ERRORS and SHOW COUNT(*)
// are percdb's own statements and clear nothing, as SHOW WARNINGS.

// Names of the diagnostics area's system variables (session only,
// read-only in MySQL).
const (
	varWarningCount = "warning_count"
	varErrorCount   = "error_count"
)

var registerDiagnostics sync.Once

// registerDiagnosticsVariables adds warning_count and error_count to
// GMS's registry (one per process, so once); their values are the
// session's (Session.GetSessionVariable).
func registerDiagnosticsVariables() {
	registerDiagnostics.Do(func() {
		var vars []gsql.SystemVariable
		for _, name := range []string{varWarningCount, varErrorCount} {
			vars = append(vars, &gsql.MysqlSystemVariable{
				Name:    name,
				Scope:   gsql.GetMysqlScope(gsql.SystemVariableScope_Session),
				Dynamic: false,
				Type:    types.NewSystemUintType(name, 0, 65535),
				Default: uint64(0),
			})
		}
		gsql.SystemVariables.AddSystemVariables(vars)
	})
}

// diagnostics is the conditions a statement left, in the order raised,
// with the SQLSTATE of each.
type diagnostics struct {
	warnings []*gsql.Warning
	states   []string
	errors   int
}

// conditions returns d's conditions as storedproc's GET DIAGNOSTICS reads
// them.
func (d diagnostics) conditions() []*mysql.SQLError {
	out := make([]*mysql.SQLError, len(d.warnings))
	for i, w := range d.warnings {
		out[i] = &mysql.SQLError{Num: w.Code, State: d.states[i], Message: w.Message}
	}
	return out
}

// beginDiagnostics keeps the conditions of the statement before query,
// which is starting (before GMS or the fast path clears them), and
// clears them as MySQL clears its diagnostics area:
//   - a diagnostics statement (SHOW WARNINGS, SHOW ERRORS, SHOW COUNT(*),
//     GET DIAGNOSTICS) reads them and clears nothing;
//   - a statement that uses no table (SELECT 1, SELECT @n, SET @x = 1,
//     DO ...) leaves them until it raises a condition of its own
//     (mysql_execute_command resets the area only when the statement
//     has tables; raising a condition resets it for the new statement):
//     SHOW WARNINGS after INSERT ...; SELECT @n lists the INSERT's
//     warnings, as in MySQL 8 and MariaDB;
//   - any other statement clears them before it runs. GMS clears them
//     only once it has planned a statement: one that failed to plan
//     (1146 of a missing table) listed the previous statement's
//     conditions before its error.
//
// It costs no allocation when there are none.
func (s *Session) beginDiagnostics(query string) {
	s.keptDiag = false
	ws := s.BaseSession.Warnings() // latest first
	if len(ws) == 0 && len(s.lastDiag.warnings) == 0 {
		return
	}
	defer func() {
		switch {
		case isDiagnosticsStatement(query):
		case len(ws) > 0 && usesNoTables(query):
			s.keptDiag = true
			s.BaseSession.ClearWarningCount()
		default:
			s.BaseSession.ClearWarnings()
		}
	}()
	d := diagnostics{}
	for i := len(ws) - 1; i >= 0; i-- {
		w := ws[i]
		state := "01000" // a warning's or note's general SQLSTATE, as storedproc's
		if w.Level == "Error" {
			d.errors++
			state = "HY000"
			if e := s.lastError; e != nil && e.Num == w.Code && e.Message == w.Message {
				state = e.State
			}
		}
		d.warnings = append(d.warnings, w)
		d.states = append(d.states, state)
	}
	s.lastDiag = d
}

// ClearWarnings implements sql.Session: while the running statement
// keeps the previous statement's conditions (beginDiagnostics), GMS's
// clearing before it runs resets only the count the statement reports.
func (s *Session) ClearWarnings() {
	if s.keptDiag {
		s.BaseSession.ClearWarningCount()
		return
	}
	s.BaseSession.ClearWarnings()
}

// dropKeptDiagnostics clears the previous statement's conditions when
// the running statement kept them and is about to raise its own.
func (s *Session) dropKeptDiagnostics() {
	if s.keptDiag {
		s.keptDiag = false
		s.BaseSession.ClearWarnings()
	}
}

// isDiagnosticsStatement reports whether query is SHOW WARNINGS, SHOW
// ERRORS, SHOW COUNT(*) ... or GET ... DIAGNOSTICS: a statement that
// reads the diagnostics area and clears nothing.
func isDiagnosticsStatement(query string) bool {
	if lexical.LeadingWordIs(query, "get") {
		return true
	}
	if !lexical.LeadingWordIs(query, "show") {
		return false
	}
	rest := lexical.TrimLeading(query, " \t\r\n")[len("show"):]
	rest = lexical.TrimLeading(rest, " \t\r\n")
	return lexical.LeadingWordIs(rest, "warnings") || lexical.LeadingWordIs(rest, "errors") || lexical.LeadingWordIs(rest, "count")
}

// usesNoTables reports whether query is a SELECT, SET or DO without the
// word FROM outside its literals, quoted names and comments, but for
// FROM DUAL: a statement that reads no table (MySQL's all_tables is
// empty; DUAL is none), since a subquery that reads one has a FROM. A
// stored function it calls that reads tables makes it one that does
// (MySQL's prelocking lists the function's tables): the call clears the
// kept conditions (storedFunctionCall.Eval).
func usesNoTables(query string) bool {
	switch lexical.Classify(query) {
	case lexical.KindSelect:
		if lexical.LeadingWordIs(query, "with") {
			return false
		}
	case lexical.KindSet:
	default:
		if !lexical.LeadingWordIs(query, "do") {
			return false
		}
	}
	return compat.FromOnlyDual(query)
}

// updateInfoWarnings writes n, the statement's warning count, into the
// info text of res, an UPDATE's OK packet ("Rows matched: 2  Changed: 0
// Warnings: 2") or an INSERT's ("Records: 2  Duplicates: 0  Warnings: 1",
// compat_insertinfo.go): GMS's UpdateInfo counted none, whatever the
// statement raised (an UPDATE outside strict mode that clipped two
// values said "Warnings: 0").
func updateInfoWarnings(res *sqltypes.Result, n uint16) {
	if res == nil || len(res.Fields) != 0 || (!strings.HasPrefix(res.Info, "Rows matched: ") && !strings.HasPrefix(res.Info, "Records: ")) {
		return
	}
	i := strings.LastIndex(res.Info, "Warnings: ")
	if i < 0 {
		return
	}
	res.Info = res.Info[:i] + "Warnings: " + strconv.Itoa(int(n))
}

// GetSessionVariable implements sql.Session: warning_count and
// error_count are the previous statement's (see beginDiagnostics).
func (s *Session) GetSessionVariable(ctx *gsql.Context, name string) (any, error) {
	if len(name) == len(varWarningCount) && strings.EqualFold(name, varWarningCount) {
		return uint64(len(s.lastDiag.warnings)), nil
	}
	if len(name) == len(varErrorCount) && strings.EqualFold(name, varErrorCount) {
		return uint64(s.lastDiag.errors), nil
	}
	return s.BaseSession.GetSessionVariable(ctx, name)
}

// diagStatement is SHOW ERRORS, SHOW COUNT(*) WARNINGS | ERRORS or GET
// DIAGNOSTICS.
type diagStatement struct {
	count     bool // SHOW COUNT(*) ...
	errors    bool // ... ERRORS
	offset    int  // SHOW ERRORS LIMIT offset, limit
	limit     int  // -1: none
	getDiag   bool
	text      string // GET DIAGNOSTICS's text
	badSyntax bool
}

// parseDiagStatement recognizes the statements of diagStatement.
func parseDiagStatement(query string) (diagStatement, bool) {
	// Every statement passes here before the fast path: the words of a
	// query are split only when it can be one of these.
	if !lexical.LeadingWordIs(query, "show") && !lexical.LeadingWordIs(query, "get") {
		return diagStatement{}, false
	}
	q := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(query), ";"))
	f := strings.Fields(q)
	if len(f) < 2 {
		return diagStatement{}, false
	}
	switch strings.ToUpper(f[0]) {
	case "GET":
		w := strings.ToUpper(f[1])
		if w == "CURRENT" || w == "STACKED" {
			if len(f) < 3 {
				return diagStatement{}, false
			}
			w = strings.ToUpper(f[2])
		}
		if w != "DIAGNOSTICS" {
			return diagStatement{}, false
		}
		return diagStatement{getDiag: true, text: q}, true
	case "SHOW":
	default:
		return diagStatement{}, false
	}
	rest := strings.ToUpper(strings.Join(f[1:], " "))
	if c, ok := strings.CutPrefix(rest, "COUNT"); ok {
		c = strings.ReplaceAll(c, " ", "")
		switch c {
		case "(*)WARNINGS":
			return diagStatement{count: true, limit: -1}, true
		case "(*)ERRORS":
			return diagStatement{count: true, errors: true, limit: -1}, true
		}
		return diagStatement{}, false
	}
	if !strings.HasPrefix(rest, "ERRORS") {
		return diagStatement{}, false
	}
	st := diagStatement{errors: true, limit: -1}
	lim := strings.TrimSpace(strings.TrimPrefix(rest, "ERRORS"))
	if lim == "" {
		return st, true
	}
	lim, ok := strings.CutPrefix(lim, "LIMIT")
	if !ok {
		return diagStatement{badSyntax: true}, true
	}
	nums := strings.Split(lim, ",")
	var vals []int
	for _, n := range nums {
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || v < 0 {
			return diagStatement{badSyntax: true}, true
		}
		vals = append(vals, v)
	}
	switch len(vals) {
	case 1:
		st.limit = vals[0]
	case 2:
		st.offset, st.limit = vals[0], vals[1]
	default:
		return diagStatement{badSyntax: true}, true
	}
	return st, true
}

// diagnosticsStatement answers st for session s from the conditions of
// the statement before it. It raises none and clears none: the session's
// warnings stay those of the statement before (GMS, which clears them,
// does not run it), for the next statement to read.
func (h *handler) diagnosticsStatement(ctx *gsql.Context, s *Session, st diagStatement, cb mysql.ResultSpoolFn) error {
	d := s.lastDiag
	switch {
	case st.badSyntax:
		return mysql.NewSQLError(mysql.ERSyntaxError, "42000", "You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use")
	case st.getDiag:
		if err := storedproc.GetDiagnostics(ctx, st.text, d.conditions(), ctx.GetLastQueryInfoInt(gsql.RowCount)); err != nil {
			return err
		}
		return cb(&sqltypes.Result{}, false)
	case st.count:
		name, n := "@@session."+varWarningCount, len(d.warnings)
		if st.errors {
			name, n = "@@session."+varErrorCount, d.errors
		}
		return cb(&sqltypes.Result{
			Fields: []*querypb.Field{{Name: name, Type: sqltypes.Uint64, Charset: mysql.CharacterSetBinary}},
			Rows:   [][]sqltypes.Value{{sqltypes.NewUint64(uint64(n))}},
		}, false)
	}
	res := &sqltypes.Result{Fields: []*querypb.Field{
		{Name: "Level", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
		{Name: "Code", Type: sqltypes.Uint32, Charset: mysql.CharacterSetBinary},
		{Name: "Message", Type: sqltypes.VarChar, Charset: mysql.CharacterSetUtf8},
	}}
	skipped := 0
	for _, w := range d.warnings {
		if w.Level != "Error" {
			continue
		}
		if skipped < st.offset {
			skipped++
			continue
		}
		if st.limit >= 0 && len(res.Rows) >= st.limit {
			break
		}
		res.Rows = append(res.Rows, []sqltypes.Value{
			sqltypes.NewVarChar(w.Level), sqltypes.NewUint32(uint32(w.Code)), sqltypes.NewVarChar(w.Message),
		})
	}
	return cb(res, false)
}

// preparedOKFilter wraps the callback of a prepared statement's
// execution, outermost: a result without columns (an OK packet) hands
// its info and the statement's warning count to percdb's connection,
// which writes them into the OK packet (wire.Conn.AnswerOK), since
// vitess writes a COM_STMT_EXECUTE's OK packet with neither, where MySQL
// sends them as for a query.
func (h *handler) preparedOKFilter(c *mysql.Conn, callback func(*sqltypes.Result) error) func(*sqltypes.Result) error {
	return func(res *sqltypes.Result) error {
		if res != nil && len(res.Fields) == 0 {
			if s := h.sessions.get(c.ConnectionID); s != nil {
				warnings := s.WarningCount()
				updateInfoWarnings(res, warnings)
				answerOKInfo(c, res.Info, warnings)
			}
		}
		return callback(res)
	}
}

// answerOKInfo has percdb's connection write info and warnings into the
// next OK packet of the answer to c's current command, the one vitess
// writes for the statement whose result is at hand
// (wire.Conn.AnswerOK: vitess writes a query's info after a '#' byte,
// which the MySQL and MariaDB clients take for its length, and a
// prepared statement's with none). It must be called for every
// statement answered with an OK packet, in order.
func answerOKInfo(c *mysql.Conn, info string, warnings uint16) {
	if wc := wireConn(c.Conn); wc != nil {
		_ = wc.AnswerOK(warnings, info)
	}
}
