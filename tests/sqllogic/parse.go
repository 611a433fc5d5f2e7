package sqllogic

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Kind says what a record does.
type Kind int

const (
	// Statement executes SQL and checks only whether it failed.
	Statement Kind = iota + 1
	// Query executes SQL and compares its rows with the expected results.
	Query
	// Halt stops the file: no later record runs.
	Halt
)

// String returns the directive that introduces a record of this kind.
func (k Kind) String() string {
	switch k {
	case Statement:
		return "statement"
	case Query:
		return "query"
	case Halt:
		return "halt"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// SortMode says how a query's values are ordered before they are compared.
type SortMode int

const (
	// NoSort compares the values in the order the engine returned them.
	NoSort SortMode = iota
	// RowSort sorts whole rows, comparing column by column as byte strings.
	RowSort
	// ValueSort sorts every value on its own, ignoring row boundaries.
	ValueSort
)

// String returns the sort mode as written in a query directive.
func (m SortMode) String() string {
	switch m {
	case NoSort:
		return "nosort"
	case RowSort:
		return "rowsort"
	case ValueSort:
		return "valuesort"
	}
	return fmt.Sprintf("SortMode(%d)", int(m))
}

// Condition is one skipif or onlyif line guarding the record after it.
type Condition struct {
	// Only is true for onlyif (run only on Engine) and false for skipif
	// (run everywhere except Engine).
	Only bool
	// Engine names the engine the condition is about, e.g. "mysql".
	Engine string
}

// Record is one entry of a .test file: a statement, a query or a halt.
type Record struct {
	// Kind says what the record does.
	Kind Kind
	// Line is the 1-based line of the record's directive ("statement",
	// "query" or "halt"), the line people open when the record fails.
	Line int
	// Conditions are the skipif/onlyif lines in front of the record.
	Conditions []Condition
	// SQL is the statement or query text, its lines joined by "\n".
	SQL string
	// ExpectError is set for "statement error": any error passes, success
	// fails.
	ExpectError bool
	// Types holds one letter per result column of a query: I (integer),
	// R (real) or T (text).
	Types string
	// Sort is the sort mode of a query.
	Sort SortMode
	// Label names a query whose results must equal those of every other
	// query with the same label in the file; empty when there is none.
	Label string
	// Expected holds the expected values of a query, one per line as
	// written in the file, when they are listed; nil when they are hashed.
	Expected []string
	// HashCount and Hash hold the expected "N values hashing to MD5" line
	// when the results are hashed (Hash is empty otherwise).
	HashCount int
	Hash      string
	// HashThreshold is the hash-threshold in force for the record: results
	// with more values than this are shown as a hash (0 means never).
	HashThreshold int
}

// Hashed reports whether the expected results are given as an MD5 hash.
func (r *Record) Hashed() bool { return r.Hash != "" }

// RunsOn reports whether the record's conditions let it run on the named
// engine. Every condition must allow it: a skipif naming the engine or an
// onlyif naming another engine excludes the record.
func (r *Record) RunsOn(engine string) bool {
	for _, c := range r.Conditions {
		if c.Only != (c.Engine == engine) {
			return false
		}
	}
	return true
}

// separator divides a query's SQL from its expected results.
const separator = "----"

// ParseFile parses the .test file at path.
func ParseFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	recs, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, err)
	}
	return recs, nil
}

// Parse reads records from r. Errors name the offending line as "N: what"
// so that callers can prefix the file name.
//
// The format (from SQLite's sqllogictest): records are separated by blank
// lines; lines starting with '#' are comments; "hash-threshold N" sets the
// threshold for the records after it; "skipif E" / "onlyif E" guard the next
// record; a directive line may end in a "# comment". SQL and result lines are
// taken verbatim (a '#' inside them is data, not a comment).
func Parse(r io.Reader) ([]Record, error) {
	sc := bufio.NewScanner(r)
	// Some generated queries are long single lines.
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	p := parser{sc: sc}
	return p.parse()
}

// parser holds the scanning state of Parse.
type parser struct {
	sc   *bufio.Scanner
	line int
	// threshold is the hash-threshold set by the last directive.
	threshold int
}

// next returns the next line without its trailing "\r", or false at the end.
func (p *parser) next() (string, bool) {
	if !p.sc.Scan() {
		return "", false
	}
	p.line++
	return strings.TrimSuffix(p.sc.Text(), "\r"), true
}

func (p *parser) parse() ([]Record, error) {
	var recs []Record
	var conds []Condition
	for {
		line, ok := p.next()
		if !ok {
			break
		}
		if isBlank(line) || isComment(line) {
			continue
		}
		fields := strings.Fields(stripComment(line))
		if len(fields) == 0 {
			continue
		}
		var rec Record
		var err error
		switch fields[0] {
		case "hash-threshold":
			if len(fields) != 2 {
				return nil, fmt.Errorf("%d: hash-threshold wants one number, got %q", p.line, line)
			}
			n, err := strconv.Atoi(fields[1])
			if err != nil || n < 0 {
				return nil, fmt.Errorf("%d: bad hash-threshold %q", p.line, fields[1])
			}
			p.threshold = n
			continue
		case "skipif", "onlyif":
			if len(fields) != 2 {
				return nil, fmt.Errorf("%d: %s wants one engine name, got %q", p.line, fields[0], line)
			}
			conds = append(conds, Condition{Only: fields[0] == "onlyif", Engine: fields[1]})
			continue
		case "halt":
			rec = Record{Kind: Halt, Line: p.line}
		case "statement":
			rec, err = p.statement(fields)
		case "query":
			rec, err = p.query(fields)
		default:
			return nil, fmt.Errorf("%d: unknown directive %q", p.line, fields[0])
		}
		if err != nil {
			return nil, err
		}
		rec.Conditions = conds
		conds = nil
		recs = append(recs, rec)
	}
	if err := p.sc.Err(); err != nil {
		return nil, fmt.Errorf("%d: %w", p.line, err)
	}
	if len(conds) > 0 {
		return nil, fmt.Errorf("%d: skipif/onlyif at the end of the file guards no record", p.line)
	}
	return recs, nil
}

// statement parses "statement ok|error" and the SQL lines after it.
func (p *parser) statement(fields []string) (Record, error) {
	rec := Record{Kind: Statement, Line: p.line, HashThreshold: p.threshold}
	if len(fields) != 2 {
		return rec, fmt.Errorf("%d: statement wants ok or error, got %q", p.line, strings.Join(fields, " "))
	}
	switch fields[1] {
	case "ok":
	case "error":
		rec.ExpectError = true
	default:
		return rec, fmt.Errorf("%d: statement wants ok or error, got %q", p.line, fields[1])
	}
	sql, sep := p.sql()
	if sep {
		return rec, fmt.Errorf("%d: statement has a %q results section", p.line, separator)
	}
	if sql == "" {
		return rec, fmt.Errorf("%d: statement has no SQL", rec.Line)
	}
	rec.SQL = sql
	return rec, nil
}

// query parses "query TYPES [SORT [LABEL]]", its SQL and expected results.
func (p *parser) query(fields []string) (Record, error) {
	rec := Record{Kind: Query, Line: p.line, HashThreshold: p.threshold}
	if len(fields) < 2 || len(fields) > 4 {
		return rec, fmt.Errorf("%d: query wants TYPES [SORT [LABEL]], got %q", p.line, strings.Join(fields, " "))
	}
	rec.Types = fields[1]
	for _, c := range rec.Types {
		if c != 'I' && c != 'R' && c != 'T' {
			return rec, fmt.Errorf("%d: query type %q: letter %q is not I, R or T", p.line, rec.Types, c)
		}
	}
	if len(fields) > 2 {
		switch fields[2] {
		case "nosort":
			rec.Sort = NoSort
		case "rowsort":
			rec.Sort = RowSort
		case "valuesort":
			rec.Sort = ValueSort
		default:
			return rec, fmt.Errorf("%d: unknown sort mode %q", p.line, fields[2])
		}
	}
	if len(fields) > 3 {
		rec.Label = fields[3]
	}
	sql, sep := p.sql()
	if sql == "" {
		return rec, fmt.Errorf("%d: query has no SQL", rec.Line)
	}
	rec.SQL = sql
	if !sep {
		// No results section: the query must return no rows.
		return rec, nil
	}
	for {
		line, ok := p.next()
		if !ok || isBlank(line) {
			break
		}
		rec.Expected = append(rec.Expected, line)
	}
	if len(rec.Expected) == 1 {
		if n, h, ok := parseHashLine(rec.Expected[0]); ok {
			rec.HashCount, rec.Hash, rec.Expected = n, h, nil
		}
	}
	return rec, nil
}

// sql reads SQL lines up to a blank line or the separator, which it reports.
// Comment lines inside the SQL are dropped.
func (p *parser) sql() (string, bool) {
	var b strings.Builder
	for {
		line, ok := p.next()
		if !ok || isBlank(line) {
			return b.String(), false
		}
		if strings.TrimSpace(line) == separator {
			return b.String(), true
		}
		if isComment(line) {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
}

// parseHashLine parses "N values hashing to MD5".
func parseHashLine(s string) (int, string, bool) {
	f := strings.Fields(s)
	if len(f) != 5 || f[2] != "hashing" || f[3] != "to" || (f[1] != "values" && f[1] != "value") {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 || len(f[4]) != 32 {
		return 0, "", false
	}
	return n, f[4], true
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

func isComment(s string) bool { return strings.HasPrefix(s, "#") }

// stripComment removes a trailing "# comment" from a directive line.
func stripComment(s string) string {
	if i := strings.IndexByte(s, '#'); i >= 0 {
		return s[:i]
	}
	return s
}
