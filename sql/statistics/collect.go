package statistics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/percdb/percdb/executor"
	"github.com/percdb/percdb/executor/copr"
	"github.com/percdb/percdb/executor/tablecodec"
	"github.com/percdb/percdb/internal/ctxtime"
	"github.com/percdb/percdb/txn"
)

// Specs returns the indexes of t whose statistics are collected: the
// primary key (of a table that has one) and every public secondary index.
func Specs(t *executor.Table) []IndexSpec {
	var out []IndexSpec
	if t.HandleKind != executor.HandleRowID && len(t.PrimaryKey) > 0 {
		out = append(out, IndexSpec{Primary: true, Columns: offsets(t.PrimaryKey)})
	}
	for _, ix := range t.Indexes {
		if ix.State == executor.IndexPublic {
			out = append(out, IndexSpec{ID: ix.ID, Columns: offsets(ix.Columns)})
		}
	}
	return out
}

func offsets(cols []executor.IndexColumn) []int {
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = c.Offset
	}
	return out
}

// CollectOptions are the options of Collect.
type CollectOptions struct {
	// Parallel is how many sub-ranges of the table are read at once
	// (values below 1 count as 1). An ANALYZE statement uses the cores.
	Parallel int
	// Duty, in (0, 1), paces a background collection (auto-analyze): the
	// table is read in PacedParts sub-ranges one after another, and after
	// each the collection sleeps so that reading takes at most this
	// fraction of its wall time. Auto-analyze reads every row, and at full
	// speed it took a core and, through the allocations the garbage
	// collector then marks on every core, a third of a TPC-C run's
	// throughput for a minute after a load. 0 (or 1 and above): no pause.
	Duty float64
	// Progress, when set, is called after each part of the table is read
	// with the parts read and the parts in all (ANALYZE TABLE's state in
	// the process list): the table is then read in ProgressParts parts
	// per unit of Parallel, Parallel parts at a time.
	Progress func(done, total int)
}

// ProgressParts is how many parts per unit of CollectOptions.Parallel a
// collection with Progress reads: enough steps for a percentage, few
// enough that the waits for each wave's slowest part cost little.
const ProgressParts = 8

// PacedParts is how many sub-ranges a paced collection reads one by one:
// its pauses are at most a 32nd of the table's reading time apart.
const PacedParts = 32

// Collect reads every row of t at tx's snapshot with a sampling program
// (copr.SampleSpec) evaluated next to the data, and returns the table's
// statistics, Version unset. Its memory is bounded by the sample size
// whatever the table's size.
func Collect(ctx context.Context, tx *txn.Txn, t *executor.Table, opts CollectOptions) (*Table, error) {
	specs := Specs(t)
	p := &copr.Program{Sample: &copr.SampleSpec{Size: copr.DefaultSampleSize, Tuples: Tuples(specs)}}
	defaults := make([]any, len(t.Columns))
	anyDefault := false
	for i, c := range t.Columns {
		p.Columns = append(p.Columns, c.ID)
		if c.TrimTrailingSpaces {
			p.Trim = append(p.Trim, i)
		}
		defaults[i] = c.OriginDefault
		anyDefault = anyDefault || c.OriginDefault != nil
	}
	if anyDefault {
		b, err := tablecodec.EncodeRow(p.Columns, defaults)
		if err != nil {
			return nil, fmt.Errorf("analyze %s: defaults: %w", t.Name, err)
		}
		p.Defaults = b
	}
	paced := opts.Duty > 0 && opts.Duty < 1
	parallel := max(opts.Parallel, 1)
	n := parallel
	switch {
	case paced:
		n, parallel = PacedParts, 1
	case opts.Progress != nil:
		n = parallel * ProgressParts
	}
	parts, err := copr.Split(ctx, tx, t.RowRange(), n)
	if err != nil {
		return nil, fmt.Errorf("analyze %s: %w", t.Name, err)
	}
	s := copr.NewSample(len(p.Columns), p.Sample.Tuples, p.Sample.Size)
	for i := 0; i < len(parts); i += parallel {
		began := time.Now()
		wave := parts[i:min(i+parallel, len(parts))]
		if !paced && opts.Progress == nil {
			wave = parts // all at once
		}
		if err := collectRange(ctx, tx, t, p, wave, s); err != nil {
			return nil, err
		}
		if opts.Progress != nil {
			opts.Progress(i+len(wave), len(parts))
		}
		if paced {
			worked := time.Since(began)
			if err := ctxtime.Sleep(ctx, time.Duration(float64(worked)*(1-opts.Duty)/opts.Duty)); err != nil {
				return nil, fmt.Errorf("analyze %s: %w", t.Name, err)
			}
		}
		if len(wave) == len(parts) {
			break
		}
	}
	st := Build(s, t.ID, p.Columns, specs)
	st.AnalyzedAt = time.Now().UnixMilli()
	return st, nil
}

// collectRange runs p over parts (consecutive sub-ranges of t, read at
// once when there are several) and merges their outputs into s.
func collectRange(ctx context.Context, tx *txn.Txn, t *executor.Table, p *copr.Program, parts []executor.KeyRange, s *copr.Sample) error {
	var out copr.Outputs
	var err error
	if len(parts) > 1 {
		out, err = copr.RunParallel(ctx, tx, t, parts, p)
	} else {
		out, _, err = copr.Run(ctx, tx, t, parts[0], p)
	}
	if err != nil {
		return fmt.Errorf("analyze %s: %w", t.Name, err)
	}
	defer out.Close()
	for {
		data, err := out.Next(ctx)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err == nil {
			err = s.Merge(data)
		}
		if err != nil {
			return fmt.Errorf("analyze %s: %w", t.Name, err)
		}
	}
}

// saveAttempts bounds the retries of Save after a write conflict with
// another ANALYZE of the same table.
const saveAttempts = 3

// ErrTableGone is returned by Save when the table no longer exists.
var ErrTableGone = errors.New("the table was dropped or rewritten")

// Save stores st in its own transaction, its Version the transaction's
// start timestamp (set on st), when exists, asked in that transaction,
// says the table still exists (else ErrTableGone: a table dropped while
// it was analyzed gets no statistics). Two ANALYZEs of one table that
// store at once conflict on the version entry; the later is tried again,
// so the last to store wins, whole.
func Save(ctx context.Context, store *txn.Store, st *Table, exists func(context.Context, *txn.Txn) (bool, error)) error {
	var err error
	for range saveAttempts {
		if err = save(ctx, store, st, exists); !errors.Is(err, txn.ErrWriteConflict) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("store statistics of table %d: %w", st.TableID, err)
	}
	return nil
}

func save(ctx context.Context, store *txn.Store, st *Table, exists func(context.Context, *txn.Txn) (bool, error)) error {
	tx, err := store.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	if ok, err := exists(ctx, tx); err != nil || !ok {
		if err == nil {
			err = ErrTableGone
		}
		return err
	}
	if st.Version, err = tx.StartTS(ctx); err != nil {
		return err
	}
	if err := tx.Set(StatsKey(st.TableID), EncodeTable(st)); err != nil {
		return err
	}
	if err := tx.Set(VersionKey(st.TableID), EncodeVersion(st)); err != nil {
		return err
	}
	return tx.Commit(ctx)
}
