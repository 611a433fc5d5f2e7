package difftest

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestFuncProbe runs a list of expressions (built-in functions, casts,
// operators; testdata/funcprobe.txt) on percdb and on MariaDB side by
// side and reports every one answered differently: its value, its error
// code, or the warnings SHOW WARNINGS lists after it. Where MariaDB 10.11
// answers otherwise than MySQL 8, the line carries MySQL 8's answer and
// percdb is held to that. The differences are reported by class; the
// test fails when there are more than testdata/funcprobe_ceiling.txt
// holds, so that the count only ever comes down.
//
//	go test ./tests/difftest -run TestFuncProbe -v [-funcprobe.all]
func TestFuncProbe(t *testing.T) {
	skipWithoutMariaDB(t)
	probes, err := readProbes("testdata/funcprobe.txt")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	maria, perc := startServers(ctx, t)
	p := connect(t, perc.Addr(), "funcprobe")
	m := connect(t, fmt.Sprintf("127.0.0.1:%d", maria.Port), "funcprobe")
	defer p.db.Close()
	defer m.db.Close()
	for _, tgt := range []*target{p, m} {
		for _, s := range []string{"SET SESSION sql_mode = '" + mysql8Mode + "'", "CREATE TABLE probe_reset (a INT)"} {
			if o := tgt.exec(ctx, s); o.err != nil {
				t.Fatalf("%s: %s: %v", tgt.name, s, o.err)
			}
		}
	}

	total, diffs := map[string]int{}, map[string]int{}
	var report strings.Builder
	n, nd := 0, 0
	for _, pr := range probes {
		n++
		total[pr.class]++
		var pa, ma string
		if pr.setup {
			// A setup statement MariaDB refuses is a mistake in the
			// list; one percdb refuses is a difference like any other.
			if o := m.exec(ctx, pr.stmt); o.err != nil {
				t.Fatalf("funcprobe.txt:%d: %s: MariaDB: %v", pr.line, pr.stmt, o.err)
			}
			ma, pa = "ok", "ok"
			if o := p.exec(ctx, pr.stmt); o.err != nil {
				pa = "error " + o.err.Error()
			}
		} else {
			// A statement that reads no table leaves the warnings of the
			// one before it in place (MySQL's rule): a read of an empty
			// table first clears them.
			for _, tgt := range []*target{p, m} {
				if o := tgt.exec(ctx, "SELECT * FROM probe_reset"); o.err != nil {
					t.Fatalf("clear warnings: %v", o.err)
				}
			}
			pa, ma = p.probeAnswer(ctx, pr.stmt), m.probeAnswer(ctx, pr.stmt)
		}
		want, by := ma, "mariadb"
		if pr.mysql8 != "" {
			want, by = pr.mysql8, "mysql8 "
		}
		differs := pa != want
		if differs {
			nd++
			diffs[pr.class]++
		}
		if differs || *flagProbeAll {
			fmt.Fprintf(&report, "funcprobe.txt:%d [%s] %s\n  percdb:  %s\n  %s: %s\n", pr.line, pr.class, pr.stmt, pa, by, want)
		}
	}
	var classes []string
	for c := range total {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	var byClass strings.Builder
	for _, c := range classes {
		fmt.Fprintf(&byClass, "%4d / %-4d %s\n", diffs[c], total[c], c)
	}
	t.Logf("funcprobe: %d expressions, %d answered differently; by class (differing / probed):\n%s\n%s", n, nd, byClass.String(), report.String())

	b, err := os.ReadFile("testdata/funcprobe_ceiling.txt")
	if err != nil {
		t.Fatal(err)
	}
	ceiling, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("funcprobe_ceiling.txt: %v", err)
	}
	switch {
	case nd > ceiling:
		t.Errorf("funcprobe: %d expressions answered differently, more than the ceiling of %d (testdata/funcprobe_ceiling.txt)", nd, ceiling)
	case nd < ceiling:
		t.Logf("funcprobe: %d differences, below the ceiling of %d: lower testdata/funcprobe_ceiling.txt to %d", nd, ceiling, nd)
	}
}

// mysql8Mode is MySQL 8's default sql_mode, which both servers run the
// probe's list under (MariaDB's own default has no NO_ZERO_DATE, for one).
const mysql8Mode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

var flagProbeAll = flag.Bool("funcprobe.all", false, "TestFuncProbe prints every expression's answers, not only the differing ones")

// probe is one line of funcprobe.txt.
type probe struct {
	class string
	line  int
	// stmt is the statement run: SELECT of the line's expression, or the
	// line itself when it is a whole statement.
	stmt string
	// setup marks a statement run on both servers whose answer is not
	// compared beyond whether it ran (tables the later lines read).
	setup bool
	// mysql8 is MySQL 8's answer where MariaDB's differs from it, as
	// probeAnswer writes it; empty otherwise.
	mysql8 string
}

// readProbes reads funcprobe.txt: "# class: NAME" starts a class; "!"
// starts a setup statement; any other line that is not blank or a
// comment is an expression (or, starting with SELECT, SET or WITH, a
// statement), with MySQL 8's answer after " -- mysql8: " when MariaDB
// deviates from it.
func readProbes(path string) ([]probe, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []probe
	class := "unclassified"
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(l, "# class:"):
			class = strings.TrimSpace(strings.TrimPrefix(l, "# class:"))
			continue
		case l == "" || strings.HasPrefix(l, "#"):
			continue
		case strings.HasPrefix(l, "!"):
			out = append(out, probe{class: class, line: n, stmt: strings.TrimSpace(l[1:]), setup: true})
			continue
		}
		p := probe{class: class, line: n}
		if i := strings.Index(l, " -- mysql8: "); i >= 0 {
			p.mysql8 = strings.TrimSpace(l[i+len(" -- mysql8: "):])
			l = strings.TrimSpace(l[:i])
		}
		upper := strings.ToUpper(l)
		if strings.HasPrefix(upper, "SELECT ") || strings.HasPrefix(upper, "WITH ") || strings.HasPrefix(upper, "SET ") {
			p.stmt = l
		} else {
			p.stmt = "SELECT " + l
		}
		out = append(out, p)
	}
	return out, sc.Err()
}

// probeAnswer runs stmt and writes what it answers on one line: the
// rows' values joined by ", " (rows by " / "), or "error CODE", then each
// warning as "; Level Code Message".
func (t *target) probeAnswer(ctx context.Context, stmt string) string {
	var b strings.Builder
	o := t.query(ctx, stmt)
	for i, r := range o.rows {
		if i > 0 {
			b.WriteString(" / ")
		}
		b.WriteString(strings.Join(r, ", "))
	}
	if o.err != nil {
		var me *mysql.MySQLError
		if errors.As(o.err, &me) {
			fmt.Fprintf(&b, "error %d", me.Number)
		} else {
			b.WriteString("error " + o.err.Error())
		}
	}
	for _, r := range t.query(ctx, "SHOW WARNINGS").rows {
		if len(r) == 3 && r[0] == "Error" {
			continue // the error itself, written above
		}
		b.WriteString("; " + strings.Join(r, " "))
	}
	return b.String()
}
