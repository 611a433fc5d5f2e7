package main

import (
	"context"

	"github.com/percdb/percdb/tests/sqllogic"
	"github.com/percdb/percdb/tests/sqllogic/inprocess"
)

// startPercdb starts percdb in process on a fresh store (in memory, or in a
// temporary directory under dir when dir is set) and returns a target on it
// and a function that stops it.
func startPercdb(ctx context.Context, dir string) (sqllogic.Target, func(), error) {
	s, err := inprocess.Start(ctx, inprocess.Options{Dir: dir})
	if err != nil {
		return nil, nil, err
	}
	return s, func() { _ = s.Close() }, nil
}
