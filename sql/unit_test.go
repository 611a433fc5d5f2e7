package sql

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	gsql "github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/percdb/percdb/kv"
	"github.com/percdb/percdb/txn"
)

func TestIsSelectForUpdate(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT c FROM t WHERE id = 1 FOR UPDATE":        true,
		"select c from t where id=? for\n update":        true,
		"SELECT * FROM t FOR UPDATE SKIP LOCKED":         true,
		"SELECT * FROM t LOCK IN SHARE MODE":             false,
		"UPDATE t SET c = 1":                             false,
		"SELECT 1":                                       false,
		"SELECT 'forupdate'":                             false,
		"select * from t where a = 1 For   Update;":      true,
		"INSERT INTO t SELECT * FROM u FOR UPDATE":       true,
		"SELECT update_time FROM information_schema.tab": false,
	} {
		if got := isSelectForUpdate(q); got != want {
			t.Errorf("isSelectForUpdate(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestIsExplain(t *testing.T) {
	for q, want := range map[string]bool{
		"EXPLAIN PLAN SELECT 1":            true,
		"  explain format=tree select 1":   true,
		"DESCRIBE t":                       true,
		"desc select 1":                    true,
		"description":                      false,
		"SELECT 'explain'":                 false,
		"explained":                        false,
		"(explain plan select count(*) x)": true,
	} {
		if got := isExplain(q); got != want {
			t.Errorf("isExplain(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestFinishSQLError(t *testing.T) {
	cases := []struct {
		err   error
		code  int
		state string
		msg   string
	}{
		{gsql.ErrTableAlreadyExists.New("t1"), 1050, "42S01", "table with name t1 already exists"},
		{gsql.ErrCheckConstraintViolated.New("c"), 3819, "HY000", `Check constraint "c" violated`},
		{gsql.ErrTableNotFound.New("x"), 1146, "", ""},
		{gsql.NewUniqueKeyErr("Duplicate entry '1' for key 't.PRIMARY'", true, nil), 1062, "23000", "Duplicate entry '1' for key 't.PRIMARY'"},
		{gsql.NewUniqueKeyErr("Duplicate entry 'a' for key 't.uc'", false, nil), 1062, "23000", "Duplicate entry 'a' for key 't.uc'"},
		{gsql.ErrSyntaxError.New("syntax error at position 3 near 'DO'"), 1064, "42000", "syntax error at position 3 near 'DO'"},
		{gsql.ErrSyntaxError.New("something else"), 1105, "", ""},
	}
	for _, c := range cases {
		got := finishSQLError(gsql.CastSQLError(c.err))
		se, ok := got.(*mysql.SQLError)
		if !ok {
			t.Fatalf("%v: got %T", c.err, got)
		}
		if se.Num != c.code || (c.state != "" && se.State != c.state) || (c.msg != "" && se.Message != c.msg) {
			t.Errorf("%v: got %d %s %q, want %d %s %q", c.err, se.Num, se.State, se.Message, c.code, c.state, c.msg)
		}
	}
}

func TestIsDDL(t *testing.T) {
	for q, want := range map[string]bool{
		"CREATE TABLE t (a INT)":                  true,
		"  create index i on t (a)":               true,
		"/* hint */ DROP TABLE t":                 true,
		"/*!40101 x */ /* y */ alter table t add": true,
		"RENAME TABLE a TO b":                     true,
		"INSERT INTO created VALUES (1)":          false,
		"created":                                 false,
		"SELECT 'create table'":                   false,
		"/* unterminated":                         false,
		"TRUNCATE t":                              false,
	} {
		if got := isDDL(q); got != want {
			t.Errorf("isDDL(%q) = %v, want %v", q, got, want)
		}
	}
}

func TestDoAsSelect(t *testing.T) {
	for q, want := range map[string]string{
		"DO 1":                  "SELECT 1",
		"  do 1, 2":             "SELECT 1, 2",
		"/* x */ DO(1); DO 2":   "SELECT(1); DO 2",
		"\nDo\tSLEEP(0)":        "SELECT\tSLEEP(0)",
		"DOT 1":                 "",
		"DO":                    "",
		"SELECT 1; DO 1":        "",
		"/* unterminated DO 1 ": "",
	} {
		got, ok := doAsSelect(q)
		if ok != (want != "") || got != want {
			t.Errorf("doAsSelect(%q) = %q, %v; want %q", q, got, ok, want)
		}
	}
}

// TestCommitInDoubtError: a commit whose write the store still held when
// KILL (or the client going away) cancelled the statement is 1317, as
// MySQL's interrupted statement, with a message saying the commit may
// still take effect; an interrupted statement that was not committing is
// the plain 1317 GMS's mapping gives. A write held while the store refused
// writes for a stall on a full disk is 1021, with the same words for a
// commit.
func TestCommitInDoubtError(t *testing.T) {
	doubt := fmt.Errorf("commit 1 keys from %q at 9: %w", "k", &kv.WriteInDoubtError{Err: context.Canceled})
	err := toSQLError(fmt.Errorf("%w: %w", txn.ErrUndetermined, doubt))
	se, ok := err.(*mysql.SQLError)
	if !ok || se.Num != 1317 || se.State != "70100" || !strings.Contains(se.Message, "may still take effect") {
		t.Fatalf("an undetermined commit after KILL: %v; want 1317 (70100) saying the commit may still take effect", err)
	}
	if err := toSQLError(fmt.Errorf("prewrite: %w", &kv.WriteInDoubtError{Err: context.Canceled})); !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupted prewrite: %v; want the cancellation left for GMS's 1317", err)
	}
	// The store refused writes for a stall on a full disk while it held
	// the write (kv/writestall.go): 1021, and for the commit point the
	// message says the commit may still take effect.
	full := &kv.DiskFullError{Dir: "/data/kv", Available: 1 << 20, Needed: 64 << 20, Stalled: true}
	doubt = fmt.Errorf("commit 1 keys from %q at 9: %w", "k", &kv.WriteInDoubtError{Err: full})
	err = toSQLError(fmt.Errorf("%w: %w", txn.ErrUndetermined, doubt))
	if se, ok := err.(*mysql.SQLError); !ok || se.Num != 1021 || !strings.Contains(se.Message, "/data/kv") || !strings.Contains(se.Message, "may still take effect") {
		t.Fatalf("an undetermined commit held in a stall on a full disk: %v; want 1021 naming the directory and saying the commit may still take effect", err)
	}
	err = toSQLError(fmt.Errorf("prewrite: %w", &kv.WriteInDoubtError{Err: full}))
	if se, ok := err.(*mysql.SQLError); !ok || se.Num != 1021 || strings.Contains(se.Message, "may still take effect") {
		t.Fatalf("a prewrite held in a stall on a full disk: %v; want the plain 1021", err)
	}
}

// TestNoSpaceError: a file percdb writes outside the store's guard (the
// timestamp oracle's window) failing for want of space is 1021 naming the
// file, not the 1105 of an unknown error.
func TestNoSpaceError(t *testing.T) {
	window := &fs.PathError{Op: "open", Path: "/data/tso.window.tmp", Err: syscall.ENOSPC}
	err := toSQLError(fmt.Errorf("tso: get 1 timestamps: save tso window: %w", window))
	if se, ok := err.(*mysql.SQLError); !ok || se.Num != 1021 || !strings.Contains(se.Message, "/data/tso.window.tmp") {
		t.Fatalf("the oracle's window file on a full disk: %v; want 1021 naming the file", err)
	}
	if se, ok := finishSQLError(fmt.Errorf("begin: %w", window)).(*mysql.SQLError); !ok || se.Num != 1021 {
		t.Fatalf("the same error reaching the client unmapped: %v; want 1021", se)
	}
	other := &fs.PathError{Op: "open", Path: "/data/tso.window.tmp", Err: syscall.EACCES}
	if err := toSQLError(fmt.Errorf("save tso window: %w", other)); !errors.Is(err, syscall.EACCES) {
		t.Fatalf("a window file not writable: %v; want the error left as it is", err)
	}
}
