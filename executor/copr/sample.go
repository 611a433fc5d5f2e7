package copr

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/percdb/percdb/executor/tablecodec"

	"github.com/percdb/percdb/internal/bytesreader"
)

// A sampling program (Program.Sample) is what ANALYZE TABLE runs next to
// the data: it reads every row of its range once and outputs, in bounded
// memory whatever the range's size, what the SQL layer needs to build a
// table's statistics (package sql/statistics):
//
//   - the number of rows, and per column the number of NULLs and the
//     total size of the encoded values;
//   - per column, and per prefix of two or more columns of each Tuples
//     list (an index's columns), a distinct-value sketch (Sketch) of the
//     encoded values;
//   - a uniform sample of at most Size rows: the rows whose key hashes
//     lowest (bottom-k sampling), so the samples of two ranges merge into
//     the sample of both by keeping the Size lowest again, and the same
//     data gives the same sample.
//
// Values are encoded by tablecodec.EncodeKey, so encoded values sort as
// the values do (strings by their bytes, not by their collation); a
// string or byte string longer than SampleSpec.MaxValueLen bytes is cut
// to that length in the sample (its sketch hashes it whole). A value the
// key encoding does not take (JSON, geometry) is sampled and hashed as
// its text.
//
// The output (AppendSample, DecodeSample) is, with every integer a
// uvarint unless said otherwise:
//
//	rows
//	columns, then per column: nulls, size, sketch
//	tuples, then per tuple: prefixes, then per prefix (lengths 2..n): sketch
//	samples, then per sample: priority (8 bytes, big-endian), then per
//	    column: length, encoded value
//	sketch: mask, hashes, then each hash (8 bytes, big-endian)

// SampleSpec is what a sampling program collects.
type SampleSpec struct {
	// Size is the most rows sampled.
	Size int
	// MaxValueLen is the most bytes of a string kept in the sample (0:
	// DefaultMaxValueLen).
	MaxValueLen int
	// Tuples lists, per index, the Columns positions of its columns, in
	// key order: a sketch is kept for each prefix of two or more.
	Tuples [][]int
}

// Defaults of a SampleSpec.
const (
	DefaultSampleSize  = 10_000
	DefaultMaxValueLen = 64
	// MaxSketchHashes is the most hashes a Sketch keeps: its estimate is
	// exact below that many distinct values and within a few per cent
	// above (the standard error of the adaptive sampling is about
	// 1/sqrt(MaxSketchHashes)).
	MaxSketchHashes = 10_000
)

func (s *SampleSpec) validate(ncols int) error {
	if s.Size <= 0 || s.MaxValueLen < 0 {
		return fmt.Errorf("program: sample size %d, value length %d", s.Size, s.MaxValueLen)
	}
	for _, t := range s.Tuples {
		if len(t) == 0 {
			return fmt.Errorf("program: an empty sample tuple")
		}
		for _, c := range t {
			if c < 0 || c >= ncols {
				return fmt.Errorf("program: tuple column position %d of %d", c, ncols)
			}
		}
	}
	return nil
}

// Sketch estimates the number of distinct values of a stream in bounded
// memory (Flajolet's adaptive sampling, as TiDB's FM sketch): it keeps
// the hashes whose low bits under Mask are zero, and when more than
// MaxSketchHashes remain it widens Mask by one bit and drops the hashes
// that no longer qualify. Each kept hash stands for Mask+1 distinct
// values. Two sketches merge into the sketch of both streams.
type Sketch struct {
	Mask   uint64
	Hashes map[uint64]struct{}
}

// NewSketch returns an empty sketch.
func NewSketch() *Sketch { return &Sketch{Hashes: map[uint64]struct{}{}} }

// Insert adds a value, given by its encoding.
func (s *Sketch) Insert(encoded []byte) { s.insertHash(xxhash.Sum64(encoded)) }

func (s *Sketch) insertHash(h uint64) {
	if h&s.Mask != 0 {
		return
	}
	s.Hashes[h] = struct{}{}
	for len(s.Hashes) > MaxSketchHashes {
		s.Mask = s.Mask<<1 | 1
		for k := range s.Hashes {
			if k&s.Mask != 0 {
				delete(s.Hashes, k)
			}
		}
	}
}

// Merge adds the values of o.
func (s *Sketch) Merge(o *Sketch) {
	if o.Mask > s.Mask {
		s.Mask = o.Mask
		for k := range s.Hashes {
			if k&s.Mask != 0 {
				delete(s.Hashes, k)
			}
		}
	}
	for h := range o.Hashes {
		s.insertHash(h)
	}
}

// NDV returns the estimated number of distinct values.
func (s *Sketch) NDV() uint64 { return (s.Mask + 1) * uint64(len(s.Hashes)) }

func appendSketch(b []byte, s *Sketch) []byte {
	b = binary.AppendUvarint(b, s.Mask)
	b = binary.AppendUvarint(b, uint64(len(s.Hashes)))
	for h := range s.Hashes {
		b = binary.BigEndian.AppendUint64(b, h)
	}
	return b
}

// SampleRow is one sampled row: its priority (the hash of its key; the
// lowest are kept) and the encoded value of each column.
type SampleRow struct {
	Priority uint64
	Values   [][]byte
}

// Sample is the collected statistics of a range (see the comment at the
// top of the file), or of several merged.
type Sample struct {
	Rows      uint64
	Nulls     []uint64
	Sizes     []uint64
	Columns   []*Sketch
	Prefixes  [][]*Sketch // per tuple, per prefix length 2..n
	sampled   sampleHeap
	sizeLimit int
}

// NewSample returns an empty collection of ncols columns and the given
// tuples, keeping at most size sample rows.
func NewSample(ncols int, tuples [][]int, size int) *Sample {
	s := &Sample{
		Nulls: make([]uint64, ncols), Sizes: make([]uint64, ncols),
		Columns: make([]*Sketch, ncols), Prefixes: make([][]*Sketch, len(tuples)),
		sizeLimit: size,
	}
	for i := range s.Columns {
		s.Columns[i] = NewSketch()
	}
	for i, t := range tuples {
		for range max(len(t)-1, 0) {
			s.Prefixes[i] = append(s.Prefixes[i], NewSketch())
		}
	}
	return s
}

// Sampled returns the sample rows, lowest priority first.
func (s *Sample) Sampled() []SampleRow {
	out := slices.Clone(s.sampled)
	slices.SortFunc(out, func(a, b SampleRow) int { return cmp3(a.Priority, b.Priority) })
	return out
}

// offer adds r to the sample if its priority is among the lowest.
func (s *Sample) offer(r SampleRow) {
	if len(s.sampled) < s.sizeLimit {
		heap.Push(&s.sampled, r)
		return
	}
	if len(s.sampled) > 0 && r.Priority < s.sampled[0].Priority {
		s.sampled[0] = r
		heap.Fix(&s.sampled, 0)
	}
}

// Merge adds the collection encoded in data (a sampling program's
// output) to s.
func (s *Sample) Merge(data []byte) error {
	o, err := DecodeSample(data, s.sizeLimit)
	if err != nil {
		return err
	}
	if len(o.Columns) != len(s.Columns) || len(o.Prefixes) != len(s.Prefixes) {
		return fmt.Errorf("sample: %d columns and %d tuples, want %d and %d", len(o.Columns), len(o.Prefixes), len(s.Columns), len(s.Prefixes))
	}
	s.Rows += o.Rows
	for i := range s.Columns {
		s.Nulls[i] += o.Nulls[i]
		s.Sizes[i] += o.Sizes[i]
		s.Columns[i].Merge(o.Columns[i])
	}
	for i := range s.Prefixes {
		if len(o.Prefixes[i]) != len(s.Prefixes[i]) {
			return fmt.Errorf("sample: tuple %d has %d prefixes, want %d", i, len(o.Prefixes[i]), len(s.Prefixes[i]))
		}
		for j := range s.Prefixes[i] {
			s.Prefixes[i][j].Merge(o.Prefixes[i][j])
		}
	}
	for _, r := range o.sampled {
		s.offer(r)
	}
	return nil
}

// AppendSample appends the encoding of s to b.
func AppendSample(b []byte, s *Sample) []byte {
	b = binary.AppendUvarint(b, s.Rows)
	b = binary.AppendUvarint(b, uint64(len(s.Columns)))
	for i, sk := range s.Columns {
		b = binary.AppendUvarint(b, s.Nulls[i])
		b = binary.AppendUvarint(b, s.Sizes[i])
		b = appendSketch(b, sk)
	}
	b = binary.AppendUvarint(b, uint64(len(s.Prefixes)))
	for _, ps := range s.Prefixes {
		b = binary.AppendUvarint(b, uint64(len(ps)))
		for _, sk := range ps {
			b = appendSketch(b, sk)
		}
	}
	b = binary.AppendUvarint(b, uint64(len(s.sampled)))
	for _, r := range s.sampled {
		b = binary.BigEndian.AppendUint64(b, r.Priority)
		for _, v := range r.Values {
			b = binary.AppendUvarint(b, uint64(len(v)))
			b = append(b, v...)
		}
	}
	return b
}

// sketch reads appendSketch's layout.
func sketch(r *bytesreader.Reader) *Sketch {
	s := NewSketch()
	s.Mask = r.Uvarint()
	n := r.Count(8)
	for range n {
		if b := r.Bytes(8); b != nil {
			s.Hashes[binary.BigEndian.Uint64(b)] = struct{}{}
		}
	}
	return s
}

// DecodeSample decodes a sampling program's output, keeping at most size
// sample rows.
func DecodeSample(data []byte, size int) (*Sample, error) {
	r := bytesreader.New(data, "sample", tablecodec.ErrCorrupt)
	s := &Sample{sizeLimit: size}
	s.Rows = r.Uvarint()
	ncols := r.Count(3)
	for range ncols {
		s.Nulls = append(s.Nulls, r.Uvarint())
		s.Sizes = append(s.Sizes, r.Uvarint())
		s.Columns = append(s.Columns, sketch(r))
	}
	ntuples := r.Count(1)
	for range ntuples {
		np := r.Count(2)
		var ps []*Sketch
		for range np {
			ps = append(ps, sketch(r))
		}
		s.Prefixes = append(s.Prefixes, ps)
	}
	nrows := r.Count(8)
	for range nrows {
		row := SampleRow{}
		row.Priority = r.Uint64()
		row.Values = make([][]byte, ncols)
		for c := range row.Values {
			row.Values[c] = r.LenBytes()
		}
		if r.Err() != nil {
			break
		}
		s.offer(row)
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return s, nil
}

// sampleHeap is a max-heap of sample rows by priority: the root is the
// first to go when a lower one comes.
type sampleHeap []SampleRow

func (h sampleHeap) Len() int           { return len(h) }
func (h sampleHeap) Less(i, j int) bool { return h[i].Priority > h[j].Priority }
func (h sampleHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *sampleHeap) Push(x any)        { *h = append(*h, x.(SampleRow)) }
func (h *sampleHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sampler is the state of a sampling program's evaluation.
type sampler struct {
	spec *SampleSpec
	s    *Sample
	// enc holds the current row's encoded values; tuple the encoding of
	// a tuple prefix.
	enc   [][]byte
	tuple []byte
}

func newSampler(spec *SampleSpec, ncols int) *sampler {
	return &sampler{spec: spec, s: NewSample(ncols, spec.Tuples, spec.Size), enc: make([][]byte, ncols)}
}

// EncodeSampleValue returns the encoding a sampling program gives v: its
// key encoding, or that of its text when the key encoding does not take
// it.
func EncodeSampleValue(buf []byte, v any) []byte {
	b, err := tablecodec.EncodeKey(buf, v)
	if err != nil {
		b, _ = tablecodec.EncodeKey(buf, fmt.Sprint(v))
	}
	return b
}

// feed adds one row (key, and its Columns values).
func (sm *sampler) feed(key []byte, row []any) {
	s := sm.s
	s.Rows++
	for i, v := range row {
		sm.enc[i] = EncodeSampleValue(sm.enc[i][:0], v)
		if v == nil {
			s.Nulls[i]++
			continue
		}
		s.Sizes[i] += uint64(len(sm.enc[i]))
		s.Columns[i].Insert(sm.enc[i])
	}
	for t, cols := range sm.spec.Tuples {
		sm.tuple = append(sm.tuple[:0], sm.enc[cols[0]]...)
		for j := 1; j < len(cols); j++ {
			sm.tuple = append(sm.tuple, sm.enc[cols[j]]...)
			s.Prefixes[t][j-1].Insert(sm.tuple)
		}
	}
	pri := xxhash.Sum64(key)
	if len(s.sampled) >= s.sizeLimit && pri >= s.sampled[0].Priority {
		return
	}
	limit := sm.spec.MaxValueLen
	if limit == 0 {
		limit = DefaultMaxValueLen
	}
	vals := make([][]byte, len(row))
	for i, v := range row {
		switch x := v.(type) {
		case string:
			if len(x) > limit {
				vals[i] = EncodeSampleValue(nil, x[:limit])
				continue
			}
		case []byte:
			if len(x) > limit {
				vals[i] = EncodeSampleValue(nil, x[:limit])
				continue
			}
		}
		vals[i] = slices.Clone(sm.enc[i])
	}
	s.offer(SampleRow{Priority: pri, Values: vals})
}

// output returns the encoding of what was collected.
func (sm *sampler) output() []byte { return AppendSample(nil, sm.s) }
