package difftest

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sirupsen/logrus"

	"github.com/percdb/percdb/bench"
	"github.com/percdb/percdb/sql/sqltest"
)

// The size of the fixed run of go test.
const (
	defaultSeeds   = 40
	defaultQueries = 250
	defaultDML     = 30
	defaultWide    = 60
)

var (
	flagSeeds            = flag.Int("difftest.seeds", defaultSeeds, "number of seeds (schemas) to run")
	flagSeed             = flag.Int64("difftest.seed", 1, "first seed")
	flagQueries          = flag.Int("difftest.queries", defaultQueries, "queries per seed (each as text and prepared)")
	flagDML              = flag.Int("difftest.dml", defaultDML, "data-changing statements per seed")
	flagWide             = flag.Int("difftest.wide", defaultWide, "queries of the wide shapes (widegen.go) per seed")
	flagWider            = flag.Bool("difftest.wider", false, "draw the seventh round's shapes too (gen.wider)")
	flagTypes            = flag.Bool("difftest.types", false, "draw columns of TINYINT UNSIGNED, YEAR, CHAR, TEXT and TIME too (gen.go, kTinyU on)")
	flagReports          = flag.Int("difftest.reports", 1, "mismatches of each class to minimize and print in full")
	flagApps             = flag.Int("difftest.apps", 0, "statements of the application shapes (appgen.go) per seed, a fifth of them data changes")
	flagUpsertSubqueries = flag.Bool("difftest.upsertsubqueries", false, "draw ON DUPLICATE KEY UPDATE values with subqueries in the application shapes (appgen.go)")
	flagRollup           = flag.Int("difftest.rollup", 0, "queries of the rollup, union and derived-table shapes (rollupgen.go) per seed")
)

func TestDifferential(t *testing.T) {
	skipWithoutMariaDB(t)
	ctx := context.Background()
	maria, perc := startServers(ctx, t)

	start := time.Now()
	st := &stats{classes: map[string]int{}, deviations: map[string]int{}}
	for i := 0; i < *flagSeeds; i++ {
		seed := *flagSeed + int64(i)
		db := fmt.Sprintf("dt%d", seed)
		p := connect(t, perc.Addr(), db)
		m := connect(t, fmt.Sprintf("127.0.0.1:%d", maria.Port), db)
		r := &run{t: t, ctx: ctx, seed: seed, db: db, p: p, m: m, st: st}
		r.seedRun()
		p.db.Close()
		m.db.Close()
	}
	t.Logf("difftest: %d seeds from %d, %d queries (text and prepared: %d statements), %d data changes, %s",
		*flagSeeds, *flagSeed, st.queries, st.statements, st.dml, time.Since(start).Round(time.Second))
	t.Logf("difftest: %d mismatches, %d explained by MariaDB deviations %v", st.mismatches, st.explained, st.deviations)
	var classes []string
	for c, n := range st.classes {
		classes = append(classes, fmt.Sprintf("%5d  %s", n, c))
	}
	sort.Sort(sort.Reverse(sort.StringSlice(classes)))
	wrong := st.mismatches - st.explained
	if len(classes) > 0 {
		t.Logf("difftest: %d statements answered differently from MariaDB, by class:\n%s", wrong, strings.Join(classes, "\n"))
	}
	// The fixed seeds of go test hold percdb to a ceiling of mismatches
	// that only ever comes down (ceiling.txt), as the sqllogictest gate
	// holds it to a floor of passing records: a new difference fails
	// the test. Other seeds and sizes report only.
	if *flagSeed != 1 || *flagSeeds != defaultSeeds || *flagQueries != defaultQueries || *flagDML != defaultDML || *flagWide != defaultWide || *flagWider || *flagTypes || *flagValues > 0 || *flagApps > 0 || *flagRollup > 0 || *flagUpsertSubqueries {
		if wrong > 0 {
			t.Errorf("difftest: %d mismatches (see above)", wrong)
		}
		return
	}
	b, err := os.ReadFile("ceiling.txt")
	if err != nil {
		t.Fatal(err)
	}
	ceiling, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("ceiling.txt: %v", err)
	}
	// The planner's row-count estimates are cached for seconds
	// (sql/stats.go), so a plan, and with it a GMS defect, can differ
	// from run to run: a slack of 1% keeps the gate from flaking.
	switch slack := ceiling / 100; {
	case wrong > ceiling+slack:
		t.Errorf("difftest: %d mismatches on the fixed seeds, more than the ceiling of %d (tests/difftest/ceiling.txt) and its 1%% slack", wrong, ceiling)
	case wrong < ceiling:
		t.Logf("difftest: %d mismatches, below the ceiling of %d: lower tests/difftest/ceiling.txt to %d", wrong, ceiling, wrong)
	}
}

// skipWithoutMariaDB skips the test when MariaDB, the reference server,
// is not installed.
func skipWithoutMariaDB(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("mariadbd"); err != nil {
		if _, err := os.Stat("/usr/sbin/mariadbd"); err != nil {
			t.Skip("mariadbd is not installed (scripts/install-test-deps.sh installs it): no reference server")
		}
	}
	if _, err := exec.LookPath("mariadb-install-db"); err != nil {
		t.Skip("mariadb-install-db is not installed: no reference server")
	}
}

// startServers starts a MariaDB server and an in-process percdb, both
// stopped at the end of the test, with GMS's log quiet (it logs every
// failed statement; the differences are reported by the test).
func startServers(ctx context.Context, t *testing.T) (*bench.Server, *sqltest.Server) {
	t.Helper()
	level := logrus.GetLevel()
	logrus.SetLevel(logrus.FatalLevel)
	t.Cleanup(func() { logrus.SetLevel(level) })
	maria, err := bench.StartMariaDB(ctx, bench.MariaDBOptions{ServerOptions: bench.ServerOptions{Dir: t.TempDir()}})
	if err != nil {
		t.Fatalf("start mariadb: %v", err)
	}
	t.Cleanup(func() { maria.Stop() })
	return maria, sqltest.Start(t, "")
}

// connect opens a pool on database db of the server at addr, creating
// the database afresh. One connection: statements run in order.
func connect(t *testing.T, addr, db string) *target {
	t.Helper()
	cfg := mysql.NewConfig()
	cfg.User = "root"
	cfg.Net = "tcp"
	cfg.Addr = addr
	cfg.Params = map[string]string{"sql_mode": "'" + sqlMode + "'"}
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	for _, s := range []string{"DROP DATABASE IF EXISTS " + db, "CREATE DATABASE " + db} {
		if _, err := admin.Exec(s); err != nil {
			t.Fatalf("%s on %s: %v", s, addr, err)
		}
	}
	cfg.DBName = db
	conn, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	conn.SetMaxOpenConns(1)
	return &target{name: addr, db: conn}
}

type stats struct {
	queries, statements, dml int
	mismatches, explained    int
	classes                  map[string]int
	deviations               map[string]int
}

// run is one seed on both servers.
type run struct {
	t       *testing.T
	ctx     context.Context
	seed    int64
	db      string
	p, m    *target
	st      *stats
	schema  *schema
	minRows [][][]string // the rows a minimization left, per table
	// valuesBefore is the values round's vt before its current
	// statement, or the tables before a data change, as statements
	// (valuesState, tablesState): printed with a mismatch.
	valuesBefore string
}

func (r *run) seedRun() {
	rng := rand.New(rand.NewSource(r.seed))
	r.schema = genSchema(rng, *flagTypes)
	if !r.setup(r.schema) {
		return
	}
	g := &gen{r: rng, s: r.schema, wider: *flagWider}
	for i := 0; i < *flagQueries; i++ {
		r.checkQuery(g.query())
	}
	// The wide queries draw from a stream of their own: the narrow
	// queries and data changes stay those of earlier runs of the seed.
	wg := &gen{r: rand.New(rand.NewSource(r.seed ^ 0x5eed_0f_1de)), s: r.schema, wide: true, wider: *flagWider}
	for i := 0; i < *flagWide; i++ {
		r.checkQuery(wg.query())
	}
	for i := 0; i < *flagDML; i++ {
		stmt := g.dml()
		r.st.dml++
		r.checkDML(stmt)
	}
	if *flagValues > 0 {
		r.valuesRun()
	}
	// The application shapes draw from a stream of their own too, after
	// everything else, so that turning them on changes nothing before.
	ag := &gen{r: rand.New(rand.NewSource(r.seed ^ 0xa995_0a11)), s: r.schema, upserts: *flagUpsertSubqueries}
	for i := 0; i < *flagApps; i++ {
		if ag.pick(5) == 0 {
			r.st.dml++
			r.checkDML(ag.appDML())
			continue
		}
		r.checkQuery(ag.appQuery())
	}
	rg := &gen{r: rand.New(rand.NewSource(r.seed ^ 0x7011_0b)), s: r.schema}
	for i := 0; i < *flagRollup; i++ {
		r.checkQuery(rg.rollupShape())
	}
}

// checkQuery runs q on both servers as text and, with its literals as
// parameters, as a prepared statement.
func (r *run) checkQuery(q *query) {
	r.st.queries++
	text := q.String()
	r.check(q, text, nil)
	if pq, args := parameterize(text); args != nil {
		r.check(q, pq, args)
	}
}

// setup creates the schema's tables and rows on both servers and checks
// they hold the same rows.
func (r *run) setup(s *schema) bool {
	for _, tgt := range []*target{r.p, r.m} {
		for _, tb := range s.tables {
			if _, err := tgt.db.ExecContext(r.ctx, "DROP TABLE IF EXISTS "+tb.name); err != nil {
				r.t.Fatalf("seed %d: drop %s: %v", r.seed, tb.name, err)
			}
			if _, err := tgt.db.ExecContext(r.ctx, tb.createSQL()); err != nil {
				r.t.Fatalf("seed %d: %s: %s: %v", r.seed, tgt.name, tb.createSQL(), err)
			}
			for _, row := range tb.rows {
				if _, err := tgt.db.ExecContext(r.ctx, tb.insertSQL(row)); err != nil {
					r.t.Fatalf("seed %d: %s: %s: %v", r.seed, tgt.name, tb.insertSQL(row), err)
				}
			}
		}
	}
	ok := true
	for _, tb := range s.tables {
		a, b := r.p.tableRows(r.ctx, tb.name), r.m.tableRows(r.ctx, tb.name)
		if !same(a, b, true) {
			r.mismatch("setup", "SELECT * FROM "+tb.name, nil, a, b, nil)
			ok = false
		}
	}
	return ok
}

// check runs a query on both servers and records a difference.
func (r *run) check(q *query, text string, args []any) {
	r.st.statements++
	a := r.p.query(r.ctx, text, args...)
	b := r.m.query(r.ctx, text, args...)
	if same(a, b, q.ordered) {
		return
	}
	r.mismatch(classify(text, a, b, args != nil), text, args, a, b, func() (string, []any, outcome, outcome) {
		return r.minimizeQuery(q, args != nil)
	})
}

// checkDML runs a data-changing statement on both servers and compares
// the affected-row counts and then the tables.
func (r *run) checkDML(stmt string) {
	r.st.statements++
	// The rows earlier data changes left decide this one's outcome: a
	// mismatch is printed after the statements that make them.
	r.valuesBefore = r.tablesState()
	defer func() { r.valuesBefore = "" }()
	a := r.p.exec(r.ctx, stmt)
	b := r.m.exec(r.ctx, stmt)
	if !same(a, b, false) {
		r.mismatch(classify(stmt, a, b, false), stmt, nil, a, b, nil)
		// Make both sides hold the same rows again.
		r.resync()
		return
	}
	for _, tb := range r.schema.tables {
		ta, tbr := r.p.tableRows(r.ctx, tb.name), r.m.tableRows(r.ctx, tb.name)
		if !same(ta, tbr, true) {
			r.mismatch("dml: table contents", stmt+thenTable+tb.name, nil, ta, tbr, nil)
			r.resync()
			return
		}
	}
}

// tablesState returns the statements that make the schema's tables as
// MariaDB holds them now.
func (r *run) tablesState() string {
	var b strings.Builder
	for _, tb := range r.schema.tables {
		b.WriteString(tb.createSQL() + ";\n")
		rows := r.m.tableRows(r.ctx, tb.name)
		if rows.err != nil || len(rows.rows) == 0 {
			continue
		}
		vals := make([]string, len(rows.rows))
		for i, row := range rows.rows {
			vals[i] = "(" + strings.Join(quoteValues(row), ", ") + ")"
		}
		fmt.Fprintf(&b, "INSERT INTO %s VALUES %s;\n", tb.name, strings.Join(vals, ", "))
	}
	return b.String()
}

// quoteValues writes the values of a row read as text as literals.
func quoteValues(row []string) []string {
	vals := make([]string, len(row))
	for i, v := range row {
		vals[i] = "NULL"
		if v != "NULL" {
			vals[i] = "'" + strings.ReplaceAll(strings.ReplaceAll(v, `\`, `\\`), "'", "''") + "'"
		}
	}
	return vals
}

// resync copies MariaDB's rows to percdb after a data-changing statement
// changed them differently, so later statements compare from the same
// data.
func (r *run) resync() {
	for _, tb := range r.schema.tables {
		rows := r.m.tableRows(r.ctx, tb.name)
		if rows.err != nil {
			continue
		}
		r.p.exec(r.ctx, "DELETE FROM "+tb.name)
		for _, row := range rows.rows {
			r.p.exec(r.ctx, tb.insertSQL(quoteValues(row)))
		}
	}
}

// mismatch records a difference: explained by a MariaDB deviation, or
// counted in its class and, for the first few, minimized and printed.
// args are a prepared statement's parameters: a deviation is matched
// against the statement with them written in as literals.
func (r *run) mismatch(class, stmt string, args []any, p, m outcome, minimize func() (string, []any, outcome, outcome)) {
	r.st.mismatches++
	// A deviation that gives a statement without it confirms itself
	// when MariaDB answers that one as percdb answered.
	confirm := func(alt string) bool {
		if isQuery(alt) {
			return same(p, r.m.query(r.ctx, alt), false)
		}
		return r.confirmChange(alt, p)
	}
	d := knownDeviation(r.schema, inline(stmt, args), p, m, confirm)
	if d == nil && !strings.HasPrefix(class, "dml") && caseTies.match(stmt, p, m) {
		d = &caseTies
	}
	if d != nil {
		r.st.explained++
		r.st.deviations[d.name]++
		return
	}
	r.st.classes[class]++
	if r.st.classes[class] > *flagReports {
		return
	}
	repro, params, lost := r.valuesBefore, "", ""
	if minimize != nil {
		var args []any
		origP, origM, origStmt := p, m, stmt
		stmt, args, p, m = minimize()
		if stmt != origStmt {
			// The statement as the run drew it: a deviation is matched
			// against it, not against its minimized form.
			lost = "-- as run: " + origStmt + "\n"
		}
		repro = r.reproduction()
		if args != nil {
			params = fmt.Sprintf("\n-- parameters: %#v", args)
		}
		if same(p, m, false) {
			// The reproduction does not differ (a mismatch that
			// depends on state the minimizer could not keep, or a
			// transient error): say so, with what first differed.
			lost += fmt.Sprintf("-- (the reproduction answers alike; the run's statement answered)\n-- percdb:\n%s\n-- mariadb:\n%s\n", describe(origP), describe(origM))
		}
	}
	r.t.Logf("MISMATCH seed %d [%s]\n%s%s%s\n-- percdb:\n%s\n-- mariadb:\n%s\n%s", r.seed, class, repro, stmt, params, describe(p), describe(m), lost)
}

// thenTable is how a table-contents mismatch names its table after the
// data change (checkDML).
const thenTable = "  -- then SELECT * FROM "

// confirmChange reports whether MariaDB answers alt, a deviation's data
// change written without it, as percdb answered the data change that
// differed (p: the affected rows, or the rows of the table after it
// when alt ends with thenTable). MariaDB's tables have changed since, so
// alt runs over the tables as they were before it (r.valuesBefore), in
// a database of its own over a connection of its own, dropped after.
func (r *run) confirmChange(alt string, p outcome) bool {
	if r.valuesBefore == "" {
		return false
	}
	stmt, table, _ := strings.Cut(alt, thenTable)
	c := connect(r.t, r.m.name, r.db+"_confirm")
	defer c.db.Close()
	defer c.exec(r.ctx, "DROP DATABASE "+r.db+"_confirm")
	for _, s := range strings.Split(r.valuesBefore, ";\n") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		if o := c.exec(r.ctx, s); o.err != nil {
			return false
		}
	}
	o := c.exec(r.ctx, stmt)
	if table == "" {
		return same(p, o, false)
	}
	return same(p, c.tableRows(r.ctx, table), true)
}

var quotedRE = regexp.MustCompile(`"[^"]*"|'[^']*'|[0-9]+`)

// classify names a difference's class, for counting: what the statement
// has, and how the answers differ.
func classify(stmt string, p, m outcome, prepared bool) string {
	var parts []string
	switch {
	case p.err != nil && m.err == nil:
		msg := quotedRE.ReplaceAllString(p.err.Error(), "…")
		if len(msg) > 90 {
			msg = msg[:90]
		}
		parts = append(parts, "percdb error: "+msg)
	case p.err == nil && m.err != nil:
		parts = append(parts, "mariadb error only")
	default:
		parts = append(parts, "wrong result")
	}
	up := strings.ToUpper(stmt)
	for _, f := range []string{"UNION", "NOT IN (SELECT", "IN (SELECT", "EXISTS", "LEFT JOIN", "JOIN", "GROUP BY", "DISTINCT", "LIKE", "BETWEEN", "CAST", "WITH", "LIMIT", "UPDATE", "DELETE", "REPLACE", "ON DUPLICATE"} {
		if strings.Contains(up, f) {
			parts = append(parts, f)
			break
		}
	}
	if prepared {
		parts = append(parts, "prepared")
	}
	return strings.Join(parts, " / ")
}
