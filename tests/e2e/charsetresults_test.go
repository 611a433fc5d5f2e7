package e2e

import (
	"context"
	"reflect"
	"strings"
	"testing"
)

// With character_set_results utf8mb3, each 4-byte character of a value
// comes as '?', in the text and the binary protocol, and the column
// definitions name utf8mb3, as MySQL sends them; GMS failed the statement
// with 1105 "failed to encode".
func TestCharsetResultsUTF8MB3(t *testing.T) {
	s := startServer(t, "")
	db := s.Open("")
	mustExec(t, db, "CREATE DATABASE cs",
		"CREATE TABLE cs.t (id INT PRIMARY KEY, s VARCHAR(20), x TEXT, b VARBINARY(20))",
		"INSERT INTO cs.t VALUES (1, 'a😀b€', '😀😀', 'z😀')")
	c := conns(t, db, 1)[0]
	mustExec(t, c, "SET character_set_results = utf8mb3")
	want := [][]string{{"a?b€", "??", "z😀"}}
	if got := queryRows(t, c, "SELECT s, x, b FROM cs.t"); !reflect.DeepEqual(got, want) {
		t.Fatalf("text protocol = %q, want %q", got, want)
	}
	if got := queryRows(t, c, "SELECT s, x, b FROM cs.t WHERE id = ?", 1); !reflect.DeepEqual(got, want) {
		t.Fatalf("binary protocol = %q, want %q", got, want)
	}
	if got := queryRows(t, c, "SELECT @@character_set_results"); !reflect.DeepEqual(got, [][]string{{"utf8mb3"}}) {
		t.Fatalf("character_set_results = %v", got)
	}
	mustExec(t, c, "SET character_set_results = utf8mb4")
	if got := queryRows(t, c, "SELECT s FROM cs.t"); !reflect.DeepEqual(got, [][]string{{"a😀b€"}}) {
		t.Fatalf("utf8mb4 again = %q", got)
	}
	if _, err := c.ExecContext(context.Background(), "SET character_set_results = utf8mb3"); err != nil {
		t.Fatal(err)
	}

	// The mariadb client in utf8mb3 prints the '?' and the columns'
	// collation.
	out := runClient(t, s, "SELECT s, x FROM cs.t", "--default-character-set=utf8mb3", "--column-type-info", "--table")
	for _, w := range []string{"a?b€", "??", "Collation:  utf8mb3_general_ci"} {
		if !strings.Contains(out, w) {
			t.Errorf("mariadb --default-character-set=utf8mb3:\n%s\nwant %q in it", out, w)
		}
	}
}
