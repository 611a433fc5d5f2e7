package fastpath

import (
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/pingcap/tidb/pkg/parser"
)

// TestScanLiterals reads statements (testdata/literals) and prints the
// template ScanLiterals cuts each into and the values of its literals,
// or "declined".
//
//	template
//	SELECT ...
//	----
//	SELECT ... ?
//	1: int64 5
//
// Rewrite the expected output with -rewrite.
func TestScanLiterals(t *testing.T) {
	var l Literals
	datadriven.RunTest(t, "testdata/literals", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "template" {
			t.Fatalf("unknown command %q", d.Cmd)
		}
		q := strings.TrimSpace(d.Input)
		if !ScanLiterals(q, &l) {
			return "declined\n"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s\n", l.Template)
		for i, v := range l.Values {
			if !v.OK {
				fmt.Fprintf(&b, "%d: not evaluated\n", i+1)
				continue
			}
			fmt.Fprintf(&b, "%d: %T %q\n", i+1, v.Lit, fmt.Sprint(v.Lit))
		}
		return b.String()
	})
}

// TestTemplateDigest checks what the text protocol's cache relies on:
// statements with one template have one TiDB digest, so that the digest
// computed for a template's first statement is every one's. Each group
// of statements has one template (checked) and one digest.
func TestTemplateDigest(t *testing.T) {
	groups := [][]string{
		{"SELECT c FROM t WHERE id = 5", "SELECT c FROM t WHERE id = -5", "SELECT c FROM t WHERE id = '5'",
			"SELECT c FROM t WHERE id = 18446744073709551615", "SELECT c FROM t WHERE id = -9223372036854775809",
			"SELECT c FROM t WHERE id = 99999999999999999999999", "SELECT c FROM t WHERE id = \"x\""},
		{"SELECT c FROM t WHERE id IN (1, 2, 3)", "SELECT c FROM t WHERE id IN (-1, 'a', -3)", "SELECT c FROM t WHERE id IN ('', '''', 0)"},
		{"SELECT c FROM t WHERE id BETWEEN 1 AND 5", "SELECT c FROM t WHERE id BETWEEN 'a' AND 'b'"},
		{"SELECT c FROM t WHERE id BETWEEN - 1 AND - 5", "SELECT c FROM t WHERE id BETWEEN - 7 AND - 8"},
		{"SELECT c FROM t WHERE a - 5 = b", "SELECT c FROM t WHERE a - 6 = b"},
		{"SELECT c FROM t WHERE a <=> -5", "SELECT c FROM t WHERE a <=> -6"},
		{"SELECT c FROM t WHERE a <> -5", "SELECT c FROM t WHERE a <> -6"},
		{"SELECT c FROM t WHERE a >= -5 AND b <= -6 AND c < -1 AND d > -2", "SELECT c FROM t WHERE a >= 5 AND b <= 6 AND c < 1 AND d > 2"},
		{"SELECT count(1) FROM t WHERE (w, id) IN ((1, 2), (3, -4))", "SELECT count(1) FROM t WHERE (w, id) IN ((5, 6), ('7', 8))"},
		{"SELECT c FROM t WHERE a = 1 ORDER BY k DESC LIMIT 10", "SELECT c FROM t WHERE a = 'x' ORDER BY k DESC LIMIT 20"},
		{"SELECT c FROM t ORDER BY 1 LIMIT 5, 10", "SELECT c FROM t ORDER BY 1 LIMIT 6, 11"},
		{"SELECT c FROM t GROUP BY k, 2 LIMIT 5 OFFSET 10", "SELECT c FROM t GROUP BY k, 2 LIMIT 6 OFFSET 1"},
		{"INSERT INTO t (a, b) VALUES (1, 'x'), (-2, NULL)", "INSERT INTO t (a, b) VALUES (3, 'y'), (-4, NULL)"},
		{"UPDATE t SET a = a + 5, b = 'x' WHERE id = 1", "UPDATE t SET a = a + 6, b = '' WHERE id = -1"},
		{"UPDATE t SET a = a - 5 WHERE id = 1", "UPDATE t SET a = a - 6 WHERE id = 2"},
		{"DELETE FROM t WHERE id = 1", "DELETE FROM t WHERE id = 'abc'"},
		{"SELECT c FROM t WHERE a = (5)", "SELECT c FROM t WHERE a = (-6)"},
		{"SELECT c FROM t WHERE a = 1 OR a = 2 AND NOT b = 3", "SELECT c FROM t WHERE a = -1 OR a = 'x' AND NOT b = 0"},
		{"SELECT c FROM t WHERE a * 2 = b / 3", "SELECT c FROM t WHERE a * 4 = b / 5"},
	}
	var l Literals
	for _, g := range groups {
		var template, normalized string
		for i, q := range g {
			if !ScanLiterals(q, &l) {
				t.Errorf("%q: declined", q)
				continue
			}
			n, _ := parser.NormalizeDigest(q)
			if i == 0 {
				template, normalized = string(l.Template), n
				continue
			}
			if string(l.Template) != template {
				t.Errorf("%q: template %q, want %q (of %q)", q, l.Template, template, g[0])
			}
			if n != normalized {
				t.Errorf("%q: digest %q, want %q (of %q)", q, n, normalized, g[0])
			}
		}
	}
}

// BenchmarkScanLiterals is the scanner over a short range SELECT.
func BenchmarkScanLiterals(b *testing.B) {
	q := "SELECT w, id, q FROM t WHERE (w, id) IN ((1,5),(1,77),(1,9000)) ORDER BY w, id"
	var l Literals
	b.ReportAllocs()
	for b.Loop() {
		if !ScanLiterals(q, &l) {
			b.Fatal("declined")
		}
	}
}

// BenchmarkParseForShape is what a statement cost before the cache:
// the digest and a parse.
func BenchmarkParseForShape(b *testing.B) {
	q := "SELECT w, id, q FROM t WHERE (w, id) IN ((1,5),(1,77),(1,9000)) ORDER BY w, id"
	p := parser.New()
	b.ReportAllocs()
	for b.Loop() {
		parser.NormalizeDigest(q)
		if _, err := p.ParseOneStmt(q, "", ""); err != nil {
			b.Fatal(err)
		}
	}
}

// TestTemplateShapes checks the cache's premise over the statements of
// every shape (candidate_test.go's, and testdata/scanshapes' with their
// markers filled with literals of every kind): where a statement's
// template has a shape whose parameters are its literals, that shape,
// its parameters bound to the literals ScanLiterals read, is the shape
// the TiDB parser gives the statement itself.
func TestTemplateShapes(t *testing.T) {
	qs := statements()
	data, err := os.ReadFile("testdata/scanshapes")
	if err != nil {
		t.Fatal(err)
	}
	lits := []string{"1", "-7", "0", "'x'", "'5'", "''", "NULL", "1.5", "-9223372036854775808", "18446744073709551615", "99999999999999999999", "TRUE", "_utf8mb4'a'", "'it''s'"}
	r := rand.New(rand.NewSource(1))
	for _, block := range strings.Split(string(data), "\nshape\n")[1:] {
		q := strings.TrimSpace(strings.SplitN(block, "----", 2)[0])
		for range 8 {
			var b strings.Builder
			for _, c := range []byte(q) {
				if c == '?' {
					b.WriteString(lits[r.Intn(len(lits))])
					continue
				}
				b.WriteByte(c)
			}
			qs = append(qs, b.String())
		}
	}
	var l Literals
	checked := 0
	for _, q := range qs {
		if !ScanLiterals(q, &l) {
			continue
		}
		normalized, _ := parser.NormalizeDigest(q)
		stmt, err := parser.New().ParseOneStmt(string(l.Template), "", "")
		if err != nil {
			continue
		}
		tmpl := ShapeOf(stmt, normalized)
		if tmpl == nil || tmpl.Params != len(l.Values) {
			continue
		}
		want := shapeOf(q)
		if want == nil && slices.ContainsFunc(l.Values, func(v Value) bool { return !v.OK }) {
			// A literal the fast path does not evaluate (a LIMIT
			// past BIGINT UNSIGNED, which the parser refuses): the
			// template's shape declines it at execution
			// (ReasonValue).
			continue
		}
		if want == nil {
			t.Errorf("%q: template %q has a shape, the statement none", q, l.Template)
			continue
		}
		tmpl.visitValues(func(v *Value) {
			if v.Param >= 0 {
				*v = l.Values[v.Param]
			}
		})
		tmpl.Params = 0
		if !reflect.DeepEqual(tmpl, want) {
			t.Errorf("%q: template %q bound to its literals:\n%+v %+v\nthe statement's shape:\n%+v %+v", q, l.Template, tmpl, tmpl.Scan, want, want.Scan)
		}
		checked++
	}
	t.Logf("%d of %d statements checked", checked, len(qs))
	if checked < len(qs)/4 {
		t.Errorf("only %d of %d statements had a template with a shape", checked, len(qs))
	}
}
