package tpcc

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ProfileOptions configure Profile.
type ProfileOptions struct {
	Scale Scale
	// Transactions is the number of transactions of each type measured.
	Transactions int
	// StockIN is RunOptions.StockIN.
	StockIN bool
	// Seed and Stream are RunOptions'.
	Seed, Stream int64
	// Sample reads the server's cumulative counters (for percdb, its store
	// requests by command: bench.ScrapeKVRequests). Profile reports the
	// difference of two samples around each type's transactions.
	Sample func(ctx context.Context) (map[string]float64, error)
}

// TxnProfile is what the transactions of one type cost the server.
type TxnProfile struct {
	Name string
	// Transactions counts those measured, Failed those of them that ended
	// in an error (whose counters are in the figures too); rolled back by
	// design (New-Order's 1%) counts as done.
	Transactions, Failed int
	// Counters are the differences of Sample per transaction measured.
	Counters map[string]float64
}

// Profile runs each transaction type alone, one after the other, from one
// terminal whose home is warehouse 1, district 1, and reports what Sample
// counted per transaction. The counts are those of a transaction that
// meets nobody (no lock waits, no retries), a figure that stays the same
// on a loaded machine where the time of a run does not. One uncounted
// transaction of each type first prepares its statements. Counters the
// server moves on its own (background work) are in the figures: run it on
// a server doing nothing else.
func Profile(ctx context.Context, db *sql.DB, opts ProfileOptions) ([]TxnProfile, error) {
	if err := opts.Scale.Validate(); err != nil {
		return nil, err
	}
	if opts.Transactions < 1 || opts.Sample == nil {
		return nil, errors.New("tpcc profile: want a positive number of transactions and a Sample")
	}
	sess := &session{db: db}
	defer sess.drop()
	r := NewRand((opts.Seed*7919+opts.Stream)*1009, NewConstants(opts.Seed))
	var out []TxnProfile
	for t := range numTxnTypes {
		p := TxnProfile{Name: t.String()}
		one := func() error {
			if err := sess.ensure(ctx); err != nil {
				return err
			}
			err := r.draw(t, opts.Scale, 1, 1, opts.StockIN).run(ctx, sess)
			if err != nil && badConn(err) {
				sess.drop()
			}
			if errors.Is(err, errRollback) {
				err = nil
			}
			return err
		}
		// Prepares the statements; its error, if any, shows again below.
		_ = one()
		before, err := opts.Sample(ctx)
		if err != nil {
			return out, fmt.Errorf("tpcc profile: %w", err)
		}
		for range opts.Transactions {
			if err := one(); err != nil {
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				p.Failed++
			}
			p.Transactions++
		}
		after, err := opts.Sample(ctx)
		if err != nil {
			return out, fmt.Errorf("tpcc profile: %w", err)
		}
		p.Counters = map[string]float64{}
		for k, v := range after {
			if d := v - before[k]; d != 0 {
				p.Counters[k] = d / float64(p.Transactions)
			}
		}
		out = append(out, p)
	}
	return out, nil
}
