package statistics

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/percdb/percdb/internal/bytesreader"
)

// The statistics live in the user key space next to the catalog, under a
// prefix of their own ("m:s:"; the catalog's layout is in sql/catalog.go),
// written in one transaction per ANALYZE:
//
//	m:s:v:<tableID>   the table's version entry: format byte 1, then
//	                  version (8 bytes, big-endian), then row count
//	                  (uvarint)
//	m:s:h:<tableID>   the table's statistics (EncodeTable)
//
// with tableID 8 bytes big-endian. A node learns of new statistics by
// scanning the version entries (small) and reads the statistics of a
// table whose version changed (Cache).
//
// EncodeTable's layout, every integer a uvarint unless said otherwise
// (IDs are zig-zag varints):
//
//	format byte (1)
//	table ID, version, analyzed at (Unix ms), row count
//	columns, then per column: ID, NDV, NULLs, average size, histogram
//	indexes, then per index: ID, primary (1 byte, 0 or 1), columns, then
//	    each column ID, then each prefix NDV (one per column), histogram
//	histogram: top-N entries, then per entry: value length, value, count;
//	    buckets, then per bucket: lower length, lower, upper length,
//	    upper, count, repeats, NDV
var (
	prefixVersions = []byte("m:s:v:")
	prefixStats    = []byte("m:s:h:")
)

// formatVersion is the first byte of every entry: a later layout gets a
// new one, and an entry of an unknown format reads as no statistics.
const formatVersion byte = 1

// ErrCorrupt is wrapped by every decoding error.
var ErrCorrupt = errors.New("corrupt statistics")

// VersionKey returns the key of a table's version entry.
func VersionKey(tableID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixVersions...), uint64(tableID))
}

// StatsKey returns the key of a table's statistics.
func StatsKey(tableID int64) []byte {
	return binary.BigEndian.AppendUint64(append([]byte(nil), prefixStats...), uint64(tableID))
}

// VersionsRange returns the range of every version entry.
func VersionsRange() (start, end []byte) {
	end = append([]byte(nil), prefixVersions...)
	end[len(end)-1]++
	return prefixVersions, end
}

// VersionEntry is a decoded version entry.
type VersionEntry struct {
	TableID  int64
	Version  uint64
	RowCount uint64
}

// EncodeVersion returns the value of t's version entry.
func EncodeVersion(t *Table) []byte {
	b := binary.BigEndian.AppendUint64([]byte{formatVersion}, t.Version)
	return binary.AppendUvarint(b, t.RowCount)
}

// DecodeVersion decodes a version entry's key and value.
func DecodeVersion(key, value []byte) (VersionEntry, error) {
	if len(key) != len(prefixVersions)+8 || len(value) < 10 || value[0] != formatVersion {
		return VersionEntry{}, fmt.Errorf("version entry %q: %w", key, ErrCorrupt)
	}
	e := VersionEntry{TableID: int64(binary.BigEndian.Uint64(key[len(prefixVersions):])), Version: binary.BigEndian.Uint64(value[1:9])}
	r := bytesreader.New(value[9:], "statistics", ErrCorrupt)
	e.RowCount = r.Uvarint()
	if err := r.End(); err != nil {
		return VersionEntry{}, fmt.Errorf("version entry %q: %w", key, err)
	}
	return e, nil
}

// EncodeTable returns the encoding of t (see the layout above).
func EncodeTable(t *Table) []byte {
	b := []byte{formatVersion}
	b = binary.AppendVarint(b, t.TableID)
	b = binary.AppendUvarint(b, t.Version)
	b = binary.AppendVarint(b, t.AnalyzedAt)
	b = binary.AppendUvarint(b, t.RowCount)
	b = binary.AppendUvarint(b, uint64(len(t.Columns)))
	for _, c := range t.Columns {
		b = binary.AppendVarint(b, c.ID)
		b = binary.AppendUvarint(b, c.NDV)
		b = binary.AppendUvarint(b, c.Nulls)
		b = binary.AppendUvarint(b, c.AvgSize)
		b = appendHistogram(b, &c.Hist)
	}
	b = binary.AppendUvarint(b, uint64(len(t.Indexes)))
	for _, ix := range t.Indexes {
		b = binary.AppendVarint(b, ix.ID)
		primary := byte(0)
		if ix.Primary {
			primary = 1
		}
		b = append(b, primary)
		b = binary.AppendUvarint(b, uint64(len(ix.ColumnIDs)))
		for _, id := range ix.ColumnIDs {
			b = binary.AppendVarint(b, id)
		}
		for _, n := range ix.NDV {
			b = binary.AppendUvarint(b, n)
		}
		b = appendHistogram(b, &ix.Hist)
	}
	return b
}

func appendBytes(b, v []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(v))), v...)
}

func appendHistogram(b []byte, h *Histogram) []byte {
	b = binary.AppendUvarint(b, uint64(len(h.TopN)))
	for _, t := range h.TopN {
		b = appendBytes(b, t.Value)
		b = binary.AppendUvarint(b, t.Count)
	}
	b = binary.AppendUvarint(b, uint64(len(h.Buckets)))
	for _, k := range h.Buckets {
		b = appendBytes(b, k.Lower)
		b = appendBytes(b, k.Upper)
		b = binary.AppendUvarint(b, k.Count)
		b = binary.AppendUvarint(b, k.Repeats)
		b = binary.AppendUvarint(b, k.NDV)
	}
	return b
}

// DecodeTable decodes EncodeTable's encoding.
func DecodeTable(b []byte) (*Table, error) {
	if len(b) == 0 || b[0] != formatVersion {
		return nil, fmt.Errorf("statistics of an unknown format: %w", ErrCorrupt)
	}
	r := bytesreader.New(b[1:], "statistics", ErrCorrupt)
	t := &Table{TableID: r.Varint(), Version: r.Uvarint(), AnalyzedAt: r.Varint(), RowCount: r.Uvarint()}
	ncols := r.Count(5)
	for range ncols {
		c := Column{ID: r.Varint(), NDV: r.Uvarint(), Nulls: r.Uvarint(), AvgSize: r.Uvarint()}
		c.Hist = histogram(r)
		t.Columns = append(t.Columns, c)
	}
	nidx := r.Count(5)
	for range nidx {
		ix := Index{ID: r.Varint()}
		switch p := r.Bytes(1); {
		case p == nil:
		case p[0] == 1:
			ix.Primary = true
		case p[0] != 0:
			r.Fail("primary flag %d", p[0])
		}
		n := r.Count(2)
		for range n {
			ix.ColumnIDs = append(ix.ColumnIDs, r.Varint())
		}
		for range n {
			ix.NDV = append(ix.NDV, r.Uvarint())
		}
		ix.Hist = histogram(r)
		t.Indexes = append(t.Indexes, ix)
	}
	if err := r.End(); err != nil {
		return nil, err
	}
	return t, nil
}

// histogram reads appendHistogram's layout.
func histogram(r *bytesreader.Reader) Histogram {
	var h Histogram
	n := r.Count(2)
	for range n {
		v := r.LenBytes()
		h.TopN = append(h.TopN, TopN{Value: v, Count: r.Uvarint()})
	}
	n = r.Count(5)
	for range n {
		lo := r.LenBytes()
		hi := r.LenBytes()
		h.Buckets = append(h.Buckets, Bucket{Lower: lo, Upper: hi, Count: r.Uvarint(), Repeats: r.Uvarint(), NDV: r.Uvarint()})
	}
	return h
}
