package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// Started is what StartServers started, for the caller to use, report and
// stop.
type Started struct {
	Servers []*Server
	// Versions maps each server name, and "percdb checkout" when percdb was
	// built, to a version string.
	Versions map[string]string
	// Argv maps each server name to its command line, the temporary
	// directory shown as $TMP.
	Argv map[string][]string
	// Idle maps each server name to its resident memory after starting.
	Idle map[string]ProcStatus
}

// Stop stops every server and joins their errors.
func (st *Started) Stop() error {
	var errs []error
	for _, s := range st.Servers {
		if err := s.Stop(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// StartServers starts the named servers (MariaDB, Percdb) in order for
// the benchmarks other than sysbench. percdb is the binary bin, or, when
// bin is empty, is built from repo at git revision rev (the working tree
// when rev is empty) into a temporary directory removed once it runs. On
// error the servers already started are in the result, for the caller to
// stop.
func StartServers(ctx context.Context, names []string, so ServerOptions, repo, rev, bin string) (*Started, error) {
	st := &Started{Versions: map[string]string{}, Argv: map[string][]string{}, Idle: map[string]ProcStatus{}}
	for _, name := range names {
		var s *Server
		var err error
		switch name {
		case MariaDB:
			s, err = StartMariaDB(ctx, MariaDBOptions{ServerOptions: so})
		case Percdb:
			path := bin
			if path == "" {
				dir, derr := os.MkdirTemp(so.withDefaults().Dir, "percdb-bench-build-")
				if derr != nil {
					return st, fmt.Errorf("build percdb: %w", derr)
				}
				defer os.RemoveAll(dir) // Linux keeps a running executable after its unlink
				if path, err = BuildPercdb(ctx, cmp.Or(repo, "."), rev, dir); err != nil {
					return st, err
				}
				st.Versions["percdb checkout"] = CommandVersion(ctx, "git", "-C", cmp.Or(repo, "."), "rev-parse", "--short=12", cmp.Or(rev, "HEAD"))
			}
			s, err = StartPercdb(ctx, PercdbOptions{ServerOptions: so, Binary: path})
		default:
			err = fmt.Errorf("unknown server %q (want %s or %s)", name, MariaDB, Percdb)
		}
		if err != nil {
			return st, err
		}
		st.Servers = append(st.Servers, s)
		st.Versions[name] = s.Version
		argv := slices.Clone(s.Argv)
		for i := range argv {
			argv[i] = strings.ReplaceAll(argv[i], s.Dir(), "$TMP")
		}
		st.Argv[name] = argv
		if m, err := s.Memory(); err == nil {
			st.Idle[name] = m
		}
	}
	return st, nil
}
