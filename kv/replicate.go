package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble"
)

// Replicator replicates a command's write batch through a consensus log
// (a region's raft group, package kv/raftstore) and returns once the
// batch is applied on this store (ApplyReplicated) or has failed. A
// command run with a replicator in its context (WithReplicator) hands its
// batch to it instead of applying it to Pebble, with its latches held,
// so every replica applies the same batches in the same order.
//
// Replicate must not return while the batch may still be applied later
// on this store, even when ctx ends: the command releases its latches
// and a one-phase commit withdraws its keys from the memory lock table
// when it returns, and a reader or writer on those keys must then find
// the batch applied or know it never will be (else a read above its
// commit_ts, served meanwhile, misses it: a lost update).
type Replicator interface {
	Replicate(ctx context.Context, batch []byte) error
}

type replicatorKey struct{}

// WithReplicator returns ctx carrying r: the write commands run with it
// replicate their batches through r. The replicator travels in the
// context because one store serves many regions, each with its own log,
// and the command's region is known to the caller (the KV node's route),
// not to the store, which serves the whole key space as its one region.
func WithReplicator(ctx context.Context, r Replicator) context.Context {
	return context.WithValue(ctx, replicatorKey{}, r)
}

// write makes wb durable and visible: through the context's replicator
// when there is one, else through the store's applier.
func (s *Store) write(ctx context.Context, wb *writeBatch) error {
	r, _ := ctx.Value(replicatorKey{}).(Replicator)
	if r == nil || wb.empty() {
		if !wb.empty() {
			if err := s.refuseWhileStalled(); err != nil {
				return err
			}
		}
		return s.applier.apply(ctx, wb)
	}
	return r.Replicate(ctx, wb.encode())
}

// ApplyReplicated applies a batch a Replicator replicated (the bytes its
// Replicate was given, on any replica): atomically, keeping the lock set
// and the iterator cache in step as every applied batch does. Applying
// the same batches again in the same order from any earlier point leaves
// the same state (every op is a blind put or delete), which is what lets
// a replica replay its log from a conservative applied index after a
// crash.
func (s *Store) ApplyReplicated(ctx context.Context, batch []byte) error {
	wb, err := decodeWriteBatch(batch)
	if err != nil {
		return fmt.Errorf("apply replicated batch: %w", err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("apply replicated batch: %w", err)
	}
	defer s.exit()
	if err := s.applier.apply(ctx, wb); err != nil {
		return fmt.Errorf("apply replicated batch: %w", err)
	}
	return nil
}

// Sync makes every batch applied so far durable (a synced empty Pebble
// batch: the WAL is synced up to it). A replica calls it before it drops
// raft log entries it applied: the store runs without a sync per batch,
// so until then the log is their only durable record.
func (s *Store) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("sync store: %w", err)
	}
	if err := s.enter(); err != nil {
		return fmt.Errorf("sync store: %w", err)
	}
	defer s.exit()
	if err := s.syncWAL(); err != nil {
		return fmt.Errorf("sync store: %w", err)
	}
	return nil
}

// syncWAL commits a synced empty batch: the WAL is synced up to it.
func (s *Store) syncWAL() error {
	b := s.db.NewBatch()
	defer b.Close()
	if err := b.LogData(nil, nil); err != nil {
		return err
	}
	return b.Commit(pebble.Sync)
}

// The replicated form of a writeBatch, the one place it is encoded:
//
//	batch  := version(1)=2 | flags(1) | uvarint nops | op* |
//	          uvarint nputs | put* | uvarint ndels | key*
//	op     := kind(1) | uvarint len key | key | [uvarint len arg | arg]
//	put    := quiet(1) | key
//	key    := uvarint len | bytes (a user key whose lock the batch writes
//	          (puts) or deletes (dels), for the replica's lock set)
//
// kind is 0 put (arg: the value), 1 delete (no arg), 2 range delete (arg:
// the end). flags: bit 0 volatile, bit 1 collects. quiet is 1 for a lock
// that never blocks a read (pessimistic and lock-type locks:
// writeBatch.lockQuiet), so that followers and new leaders keep range
// reads on the fast path past them as the leader does, 0 for any other.
//
// Versions: version 1 is version 2 without the quiet bytes (put := key);
// it is still decoded, with every lock counted as one that may block (a
// replica replays entries an older binary wrote into its raft log), and
// encode writes version 2 only. Any other version is refused with
// errCorruptBatch naming it: a replica of an older binary refuses version
// 2 batches that way, so the KV nodes of a cluster are upgraded together
// (docs/cluster.md).
const (
	batchVersion1 = 1
	batchVersion  = 2
)

const (
	opPut byte = iota
	opDelete
	opDeleteRange
)

const (
	flagVolatile byte = 1 << iota
	flagCollects
)

func appendBytes(b, v []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	return append(b, v...)
}

// encode returns the batch's replicated form.
func (b *writeBatch) encode() []byte {
	n := 16
	for _, op := range b.ops {
		n += 12 + len(op.key) + len(op.value) + len(op.rangeEnd)
	}
	for _, k := range b.lockPuts {
		n += 7 + len(k)
	}
	for _, k := range b.lockDels {
		n += 6 + len(k)
	}
	out := make([]byte, 0, n)
	var flags byte
	if b.volatile {
		flags |= flagVolatile
	}
	if b.collects {
		flags |= flagCollects
	}
	out = append(out, batchVersion, flags)
	out = binary.AppendUvarint(out, uint64(len(b.ops)))
	for _, op := range b.ops {
		switch {
		case op.rangeEnd != nil:
			out = appendBytes(append(out, opDeleteRange), op.key)
			out = appendBytes(out, op.rangeEnd)
		case op.delete:
			out = appendBytes(append(out, opDelete), op.key)
		default:
			out = appendBytes(append(out, opPut), op.key)
			out = appendBytes(out, op.value)
		}
	}
	quiet := b.lockQuiet
	if len(quiet) != len(b.lockPuts) {
		quiet = nil // kinds unknown: every lock may block
	}
	out = binary.AppendUvarint(out, uint64(len(b.lockPuts)))
	for i, k := range b.lockPuts {
		var q byte
		if quiet != nil && quiet[i] {
			q = 1
		}
		out = appendBytes(append(out, q), k)
	}
	out = binary.AppendUvarint(out, uint64(len(b.lockDels)))
	for _, k := range b.lockDels {
		out = appendBytes(out, k)
	}
	return out
}

// errCorruptBatch: a replicated batch that does not decode.
var errCorruptBatch = errors.New("corrupt replicated batch")

// batchDecoder reads a replicated batch; the first error sticks.
type batchDecoder struct {
	b   []byte
	err error
}

func (d *batchDecoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errCorruptBatch
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *batchDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errCorruptBatch
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *batchDecoder) byte1() byte {
	if d.err != nil || len(d.b) == 0 {
		d.err = errCorruptBatch
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

// count reads a list length, refusing one the remaining bytes cannot
// hold (each element takes at least one byte), so a corrupt length does
// not allocate.
func (d *batchDecoder) count() int {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errCorruptBatch
	}
	return int(n)
}

// decodeWriteBatch parses encode's output. The batch's byte slices alias
// data.
func decodeWriteBatch(data []byte) (*writeBatch, error) {
	d := &batchDecoder{b: data}
	version := d.byte1()
	if d.err == nil && version != batchVersion && version != batchVersion1 {
		return nil, fmt.Errorf("%w: version %d (this binary reads versions %d and %d)", errCorruptBatch, version, batchVersion1, batchVersion)
	}
	flags := d.byte1()
	wb := &writeBatch{volatile: flags&flagVolatile != 0, collects: flags&flagCollects != 0}
	nops := d.count()
	if d.err == nil {
		wb.ops = make([]batchOp, 0, nops)
	}
	for i := 0; i < nops && d.err == nil; i++ {
		kind := d.byte1()
		op := batchOp{key: d.bytes()}
		switch kind {
		case opPut:
			op.value = d.bytes()
			if op.value == nil {
				op.value = []byte{}
			}
		case opDelete:
			op.delete = true
		case opDeleteRange:
			op.delete, op.rangeEnd = true, d.bytes()
			if op.rangeEnd == nil {
				op.rangeEnd = []byte{}
			}
		default:
			d.err = fmt.Errorf("%w: op kind %d", errCorruptBatch, kind)
		}
		wb.ops = append(wb.ops, op)
	}
	nputs := d.count()
	for i := 0; i < nputs && d.err == nil; i++ {
		if version == batchVersion1 {
			wb.lockPuts = append(wb.lockPuts, d.bytes())
			continue
		}
		q := d.byte1()
		if d.err == nil && q > 1 {
			d.err = fmt.Errorf("%w: lock kind byte %d", errCorruptBatch, q)
		}
		wb.lockPuts = append(wb.lockPuts, d.bytes())
		wb.lockQuiet = append(wb.lockQuiet, q == 1)
	}
	ndels := d.count()
	for i := 0; i < ndels && d.err == nil; i++ {
		wb.lockDels = append(wb.lockDels, d.bytes())
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", errCorruptBatch, len(d.b))
	}
	if d.err != nil {
		return nil, d.err
	}
	return wb, nil
}
