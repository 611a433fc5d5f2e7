package difftest

import (
	"flag"
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

var (
	flagValues  = flag.Int("difftest.values", 0, "statements of the values round (valuesgen.go) per seed")
	flagUpserts = flag.Bool("difftest.upserts", false, "the values round draws INSERT ... ON DUPLICATE KEY UPDATE and REPLACE too")
	flagStrings = flag.Bool("difftest.strings", false, "the values round indexes more of vt's columns and compares them with strings (valuesgen.go, strPred)")
)

// valuesRun runs the values round of the seed: vt made on both servers,
// then statements of valuesGen, from a stream of their own.
func (r *run) valuesRun() {
	g := &valuesGen{r: rand.New(rand.NewSource(r.seed ^ 0x7a1_0e5)), upsert: *flagUpserts, strs: *flagStrings}
	setup := append([]string{"SET SESSION sql_mode = '" + sqlMode + "'", "DROP TABLE IF EXISTS vt", g.createSQL()}, g.seedRows()...)
	for _, tgt := range []*target{r.p, r.m} {
		for _, s := range setup {
			if _, err := tgt.db.ExecContext(r.ctx, s); err != nil {
				r.t.Fatalf("seed %d: %s: %s: %v", r.seed, tgt.name, s, err)
			}
		}
	}
	for i := 0; i < *flagValues; i++ {
		mode := "SET SESSION sql_mode = '" + g.mode() + "'"
		r.p.exec(r.ctx, mode)
		r.m.exec(r.ctx, mode)
		r.valuesBefore = r.valuesState(g.createSQL(), mode)
		r.st.statements++
		r.st.queries++
		if g.pick(2) == 0 {
			q := g.query()
			r.checkValues(q, r.p.query(r.ctx, q), r.m.query(r.ctx, q), false)
			continue
		}
		s := g.dml()
		r.st.dml++
		r.checkValues(s, r.p.exec(r.ctx, s), r.m.exec(r.ctx, s), true)
	}
	r.valuesBefore = ""
	for _, tgt := range []*target{r.p, r.m} {
		tgt.exec(r.ctx, "SET SESSION sql_mode = '"+sqlMode+"'")
	}
}

// checkValues compares the answers to a statement of the values round:
// the rows, the error codes, and for a data change the codes of its
// warnings and the table it leaves.
func (r *run) checkValues(stmt string, p, m outcome, dml bool) {
	class := "values: "
	switch {
	case !same(p, m, true):
		class += classify(stmt, p, m, false)
	case errorCode(p.err) != errorCode(m.err):
		class += fmt.Sprintf("error %d, mariadb %d", errorCode(p.err), errorCode(m.err))
	case dml:
		wp, wm := r.p.warningCodes(r), r.m.warningCodes(r)
		if wp != wm {
			r.mismatch(class+"warnings", stmt, nil, outcome{rows: [][]string{{wp}}}, outcome{rows: [][]string{{wm}}}, nil)
			return
		}
		tp, tm := r.p.tableRows(r.ctx, "vt"), r.m.tableRows(r.ctx, "vt")
		if same(tp, tm, true) {
			return
		}
		r.mismatch(class+"table contents", stmt+thenTable+"vt", nil, tp, tm, nil)
		r.resyncValues()
		return
	default:
		return
	}
	r.mismatch(class, stmt, nil, p, m, nil)
	if dml {
		r.resyncValues()
	}
}

// valuesState returns the statements that make vt as MariaDB holds it
// now and set the next statement's sql_mode: a mismatch of the values
// round is printed after them, so that it can be run again by hand
// (TestRepro) on the rows it met rather than the seed's first ones.
func (r *run) valuesState(create, mode string) string {
	rows := r.m.tableRows(r.ctx, "vt")
	if rows.err != nil {
		return ""
	}
	vals := make([]string, len(rows.rows))
	for i, row := range rows.rows {
		vals[i] = "(" + strings.Join(row, ", ") + ")"
	}
	state := create + ";\n"
	if len(vals) > 0 {
		state += "INSERT INTO vt VALUES " + strings.Join(vals, ", ") + ";\n"
	}
	return state + mode + ";\n"
}

// resyncValues makes percdb's vt MariaDB's again.
func (r *run) resyncValues() {
	rows := r.m.tableRows(r.ctx, "vt")
	if rows.err != nil {
		return
	}
	r.p.exec(r.ctx, "DELETE FROM vt")
	for _, row := range rows.rows {
		r.p.exec(r.ctx, "INSERT INTO vt VALUES ("+strings.Join(row, ", ")+")")
	}
}

// warningCodes returns the codes of the last statement's warnings and
// errors (not its notes), sorted, an error's written "error N": the two
// servers word some messages differently (MariaDB names a column
// `db`.`t`.`c` in 1366).
func (t *target) warningCodes(r *run) string {
	o := t.query(r.ctx, "SHOW WARNINGS")
	if o.err != nil {
		return "error: " + o.err.Error()
	}
	var codes []string
	for _, w := range o.rows {
		switch {
		case len(w) < 2 || w[0] == "Note":
		case w[0] == "Error":
			codes = append(codes, "error "+w[1])
		default:
			codes = append(codes, w[1])
		}
	}
	sort.Strings(codes)
	return strings.Join(codes, ",")
}
