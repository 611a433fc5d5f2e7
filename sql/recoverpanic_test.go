package sql

import (
	"errors"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
)

func TestRecoverPanic(t *testing.T) {
	err := recoverPanic("SELECT 1", func() error {
		var s []int
		_ = s[3]
		return nil
	})
	var se *mysql.SQLError
	if !errors.As(err, &se) || se.Num != codeUnknown {
		t.Fatalf("recoverPanic of a panic = %v, want a 1105 SQLError", err)
	}
	want := errors.New("plain")
	if err := recoverPanic("SELECT 1", func() error { return want }); err != want {
		t.Fatalf("recoverPanic passed on %v, want %v", err, want)
	}
}
