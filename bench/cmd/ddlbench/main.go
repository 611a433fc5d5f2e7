// Command ddlbench measures a schema change on a loaded table while
// writers update it, the way issue #21 reproduced lost index entries: it
// starts a private server (a percdb binary, or MariaDB for comparison),
// loads s.t (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(120)) with
// -rows rows, runs -writers connections of autocommit
//
//	UPDATE s.t SET k = k + 1000000 WHERE id = <random id>
//
// while one more runs the DDL (-ddl, CREATE INDEX ik ON s.t (k) by
// default), and reports the DDL's time, the server's resident memory
// growth during it, the writers' statements and errors, and whether the
// index agrees with the table: a sample of updated rows looked up through
// the index, counts through the index and through a scan, and CHECK TABLE.
// Run it from the root of the checkout:
//
//	go build -o /tmp/percdb ./cmd/percdb
//	go run ./bench/cmd/ddlbench -binary /tmp/percdb -rows 1000000
//	go run ./bench/cmd/ddlbench -mariadb -rows 1000000
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ddlbench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		binary  = flag.String("binary", "", "percdb server binary to measure")
		mariadb = flag.Bool("mariadb", false, "measure a private MariaDB instead")
		rows    = flag.Int("rows", 200000, "rows to load")
		writers = flag.Int("writers", 4, "connections updating rows during the DDL")
		ddl     = flag.String("ddl", "CREATE INDEX ik ON s.t (k)", "the schema change to measure")
		sample  = flag.Int("sample", 300, "updated rows to look up through the index afterwards")
	)
	flag.Parse()
	ctx := context.Background()
	var (
		srv *bench.Server
		err error
	)
	switch {
	case *mariadb:
		srv, err = bench.StartMariaDB(ctx, bench.MariaDBOptions{})
	case *binary != "":
		srv, err = bench.StartPercdb(ctx, bench.PercdbOptions{Binary: *binary})
	default:
		return errors.New("give -binary or -mariadb")
	}
	if err != nil {
		return err
	}
	defer srv.Stop()

	db, err := srv.OpenDB()
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(*writers + 4)
	loadStart := time.Now()
	if err := bench.CreateAndLoad(db, *rows); err != nil {
		return err
	}
	fmt.Printf("%s: loaded %d rows in %v\n", srv.Name, *rows, time.Since(loadStart).Round(time.Millisecond))

	before, err := srv.Memory()
	if err != nil {
		return err
	}
	var peak atomic.Int64
	peak.Store(before.RSS)
	sampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-sampling:
				return
			case <-tick.C:
				if m, err := srv.Memory(); err == nil && m.RSS > peak.Load() {
					peak.Store(m.RSS)
				}
			}
		}
	}()

	stop := make(chan struct{})
	var (
		wg               sync.WaitGroup
		mu               sync.Mutex
		updated          []int
		statements, errs atomic.Int64
		codesMu          sync.Mutex
		codes            = make(map[string]int)
	)
	for w := 0; w < *writers; w++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rnd := rand.New(rand.NewSource(seed))
			for {
				select {
				case <-stop:
					return
				default:
				}
				id := 1 + rnd.Intn(*rows)
				statements.Add(1)
				if _, err := db.Exec("UPDATE s.t SET k = k + 1000000 WHERE id = ?", id); err != nil {
					errs.Add(1)
					code := "other"
					var me *mysql.MySQLError
					if errors.As(err, &me) {
						code = fmt.Sprint(me.Number)
					}
					codesMu.Lock()
					codes[code]++
					codesMu.Unlock()
					continue
				}
				mu.Lock()
				updated = append(updated, id)
				mu.Unlock()
			}
		}(int64(w) + time.Now().UnixNano())
	}
	time.Sleep(200 * time.Millisecond)
	ddlStart := time.Now()
	_, ddlErr := db.Exec(*ddl)
	ddlTime := time.Since(ddlStart)
	time.Sleep(200 * time.Millisecond)
	close(stop)
	wg.Wait()
	close(sampling)
	<-sampled
	if ddlErr != nil {
		fmt.Printf("DDL failed: %v\n", ddlErr)
	}
	var byCode []string
	for code, n := range codes {
		byCode = append(byCode, fmt.Sprintf("%s x%d", code, n))
	}
	sort.Strings(byCode)
	fmt.Printf("DDL %q: %v; server RSS %d MiB before, peak %d MiB during (+%d MiB)\n",
		*ddl, ddlTime.Round(time.Millisecond), before.RSS>>20, peak.Load()>>20, (peak.Load()-before.RSS)>>20)
	fmt.Printf("writers: %d statements, %d errors %v\n", statements.Load(), errs.Load(), byCode)
	return verify(db, updated, *sample)
}

// verify looks updated rows up through the index and compares counts
// through the index and through a scan.
func verify(db *sql.DB, updated []int, sample int) error {
	rnd := rand.New(rand.NewSource(1))
	rnd.Shuffle(len(updated), func(i, j int) { updated[i], updated[j] = updated[j], updated[i] })
	seen := make(map[int]bool)
	missing, looked := 0, 0
	for _, id := range updated {
		if looked >= sample || seen[id] {
			continue
		}
		seen[id] = true
		looked++
		var k int
		if err := db.QueryRow("SELECT k FROM s.t WHERE id = ?", id).Scan(&k); err != nil {
			return err
		}
		var got int
		if err := db.QueryRow("SELECT count(*) FROM s.t WHERE k = ?", k).Scan(&got); err != nil {
			return err
		}
		if got != 1 {
			missing++
		}
	}
	var viaIndex, viaScan int
	if err := db.QueryRow("SELECT count(*) FROM s.t WHERE k >= 1000000").Scan(&viaIndex); err != nil {
		return err
	}
	if err := db.QueryRow("SELECT count(*) FROM s.t WHERE k + 0 >= 1000000").Scan(&viaScan); err != nil {
		return err
	}
	fmt.Printf("index check: %d of %d sampled updated rows not found through the index; k >= 1000000: %d through the index, %d by a scan\n",
		missing, looked, viaIndex, viaScan)
	var name, op, typ, text string
	if err := db.QueryRow("CHECK TABLE s.t").Scan(&name, &op, &typ, &text); err != nil {
		fmt.Printf("CHECK TABLE: %v\n", err)
	} else {
		fmt.Printf("CHECK TABLE: %s %s\n", typ, text)
	}
	return nil
}
