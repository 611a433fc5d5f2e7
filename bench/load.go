package bench

import (
	"database/sql"
	"fmt"
	"strings"
	"sync"
)

// CreateAndLoad creates the database s and its table s.t (id INT PRIMARY
// KEY, k INT NOT NULL, pad VARCHAR(120)) and loads rows rows (LoadRows).
func CreateAndLoad(db *sql.DB, rows int) error {
	for _, q := range []string{
		"CREATE DATABASE s",
		"CREATE TABLE s.t (id INT PRIMARY KEY, k INT NOT NULL, pad VARCHAR(120))",
	} {
		if _, err := db.Exec(q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return LoadRows(db, "s.t", rows)
}

// LoadRows inserts ids 1..rows into table, a table of three columns (id
// INT PRIMARY KEY, k INT, pad VARCHAR(120)), with k = id and a 120-digit
// pad, in statements of 1,000 rows from two connections. The benchmarks of
// schema changes and garbage collection load their tables with it.
func LoadRows(db *sql.DB, table string, rows int) error {
	const batch = 1000
	var wg sync.WaitGroup
	errc := make(chan error, 2)
	for part := 0; part < 2; part++ {
		wg.Add(1)
		go func(part int) {
			defer wg.Done()
			for start := 1 + part*batch; start <= rows; start += 2 * batch {
				var b strings.Builder
				b.WriteString("INSERT INTO " + table + " VALUES ")
				for id := start; id < start+batch && id <= rows; id++ {
					if id > start {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, "(%d,%d,'%0120d')", id, id, id)
				}
				if _, err := db.Exec(b.String()); err != nil {
					errc <- fmt.Errorf("load %s: %w", table, err)
					return
				}
			}
		}(part)
	}
	wg.Wait()
	close(errc)
	return <-errc
}
