// Command dedup is the Percolator paper's worked example of observers, on
// percdb: a documents table kept deduplicated incrementally. Documents
// are written by any MySQL client; observer "dedup" (watching
// documents.body) keeps each document's content hash in members and one
// row per distinct content in contents, whose canonical_id is the
// smallest document id with that content, so duplicates collapse to one
// canonical row; observer "canon" (watching contents.canonical_id, chained
// on dedup's output) keeps the canonical table: one (hash, document, url)
// row per distinct content.
//
// It writes documents with many duplicates, waits until the observers
// have caught up, checks the result against a recomputation from
// scratch, then changes and deletes documents and checks again. With
// -serve it keeps serving on -addr afterwards, for the mariadb client.
//
//	go run ./examples/dedup -docs 300 -distinct 40
//	go run ./examples/dedup -serve -addr 127.0.0.1:4000   # then: mariadb -h127.0.0.1 -P4000 -uroot web
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/percdb/percdb/examples/internal/node"
)

func main() {
	dir := flag.String("dir", "", "data directory (default: a temporary one, removed at exit)")
	addr := flag.String("addr", "127.0.0.1:0", "MySQL address to serve on")
	docs := flag.Int("docs", 300, "documents to write")
	distinct := flag.Int("distinct", 40, "distinct contents among them")
	serve := flag.Bool("serve", false, "keep serving after the checks, until interrupted")
	flag.Parse()
	if err := run(*dir, *addr, *docs, *distinct, *serve, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// run is the whole example; see the package comment.
func run(dir, addr string, docs, distinct int, serve bool, out io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	nd, err := node.Start(ctx, dir, addr, true)
	if err != nil {
		return err
	}
	defer nd.Close()
	srv, db := nd.Srv, nd.DB
	if err := createSchema(db); err != nil {
		return err
	}
	r, err := startObservers(ctx, srv)
	if err != nil {
		return err
	}
	defer r.stop()
	fmt.Fprintf(out, "percdb on %s, data in %s\n", srv.Addr(), nd.Dir)

	began := time.Now()
	for i := 1; i <= docs; i++ {
		if _, err := db.Exec("INSERT INTO web.documents VALUES (?, ?, ?)", i, fmt.Sprintf("http://site%d.example/%d", i%7, i), body(i%distinct)); err != nil {
			return err
		}
	}
	wrote := time.Since(began)
	if err := converge(ctx, db, r.runner); err != nil {
		return err
	}
	fmt.Fprintf(out, "%d documents written in %v; observers caught up %v later: %d distinct contents\n",
		docs, wrote.Round(time.Millisecond), (time.Since(began) - wrote).Round(time.Millisecond), distinct)

	// Change some documents' content, delete others.
	for i := 1; i <= docs; i += 5 {
		if _, err := db.Exec("UPDATE web.documents SET body = ? WHERE id = ?", body(i%3), i); err != nil {
			return err
		}
	}
	for i := 2; i <= docs; i += 7 {
		if _, err := db.Exec("DELETE FROM web.documents WHERE id = ?", i); err != nil {
			return err
		}
	}
	if err := converge(ctx, db, r.runner); err != nil {
		return err
	}
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM web.canonical").Scan(&n); err != nil {
		return err
	}
	st := r.runner.Stats()
	fmt.Fprintf(out, "after changes and deletes: %d canonical documents, all consistent\n", n)
	fmt.Fprintf(out, "observer runs: %d committed, %d conflicts retried, %d found done\n", st.Committed, st.Conflicts, st.Acknowledged)
	if serve {
		fmt.Fprintf(out, "serving on %s until interrupted (mariadb -h HOST -P PORT -uroot web)\n", srv.Addr())
		<-ctx.Done()
	}
	return nil
}
