package tablecodec

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// RowFormatV1 is the first byte of every row value in the format below. A
// later format gets another byte; decoders refuse what they do not know.
const RowFormatV1 byte = 0x80

// Type tags of the row value format. Each tag names one Go type exactly, so
// a value decodes to the type it was encoded from.
const (
	tagNull      byte = 0x00
	tagInt8      byte = 0x01
	tagInt16     byte = 0x02
	tagInt32     byte = 0x03
	tagInt64     byte = 0x04
	tagInt       byte = 0x05
	tagUint8     byte = 0x06
	tagUint16    byte = 0x07
	tagUint32    byte = 0x08
	tagUint64    byte = 0x09
	tagUint      byte = 0x0A
	tagFloat32   byte = 0x0B
	tagFloat64   byte = 0x0C
	tagString    byte = 0x0D
	tagBytes     byte = 0x0E
	tagDecimal   byte = 0x0F
	tagTime      byte = 0x10
	tagTimespan  byte = 0x11
	tagJSON      byte = 0x12
	tagGeometry  byte = 0x13
	tagBoolFalse byte = 0x14
	tagBoolTrue  byte = 0x15
)

// EncodeRow encodes a row's column values, tagged by column ID, as a row
// value. colIDs and vals are parallel; IDs must be non-negative and
// distinct. See AppendRow.
func EncodeRow(colIDs []int64, vals []any) ([]byte, error) {
	return AppendRow(make([]byte, 0, 1+len(vals)*10), colIDs, vals)
}

// AppendRow appends the row value of vals, tagged by colIDs, to buf:
//
//	RowFormatV1 { uvarint(colID) tag payload }*
//
// Payloads: none for NULL and bools; zig-zag varint for signed integers and
// types.Timespan; uvarint for unsigned integers (enum, set and bit values
// are uint16/uint64); 4 or 8 little-endian bytes for floats; uvarint length
// and bytes for strings, []byte, JSON text and geometry (GMS's serialized
// form: SRID and little-endian WKB); for decimals uvarint length, then
// varint exponent, a sign byte and the big-endian magnitude of the
// coefficient; for times varint Unix seconds and uvarint nanoseconds.
//
// Values of any other Go type are refused with an error naming the type.
func AppendRow(buf []byte, colIDs []int64, vals []any) ([]byte, error) {
	if len(colIDs) != len(vals) {
		return buf, fmt.Errorf("encode row: %d column IDs for %d values", len(colIDs), len(vals))
	}
	if err := checkColumnIDs(colIDs); err != nil {
		return buf, fmt.Errorf("encode row: %w", err)
	}
	buf = append(buf, RowFormatV1)
	for i, v := range vals {
		buf = binary.AppendUvarint(buf, uint64(colIDs[i]))
		var err error
		if buf, err = appendRowDatum(buf, v); err != nil {
			return buf, fmt.Errorf("encode row: column %d: %w", colIDs[i], err)
		}
	}
	return buf, nil
}

// checkColumnIDs refuses negative and repeated column IDs.
func checkColumnIDs(ids []int64) error {
	const quadraticLimit = 64 // past this a map is cheaper than pairwise checks
	var seen map[int64]struct{}
	if len(ids) > quadraticLimit {
		seen = make(map[int64]struct{}, len(ids))
	}
	for i, id := range ids {
		if id < 0 {
			return fmt.Errorf("negative column ID %d", id)
		}
		if seen != nil {
			if _, dup := seen[id]; dup {
				return fmt.Errorf("column ID %d given twice", id)
			}
			seen[id] = struct{}{}
			continue
		}
		for _, prev := range ids[:i] {
			if prev == id {
				return fmt.Errorf("column ID %d given twice", id)
			}
		}
	}
	return nil
}

func appendRowDatum(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, tagNull), nil
	case bool:
		if v {
			return append(buf, tagBoolTrue), nil
		}
		return append(buf, tagBoolFalse), nil
	case int8:
		return binary.AppendVarint(append(buf, tagInt8), int64(v)), nil
	case int16:
		return binary.AppendVarint(append(buf, tagInt16), int64(v)), nil
	case int32:
		return binary.AppendVarint(append(buf, tagInt32), int64(v)), nil
	case int64:
		return binary.AppendVarint(append(buf, tagInt64), v), nil
	case int:
		return binary.AppendVarint(append(buf, tagInt), int64(v)), nil
	case uint8:
		return binary.AppendUvarint(append(buf, tagUint8), uint64(v)), nil
	case uint16:
		return binary.AppendUvarint(append(buf, tagUint16), uint64(v)), nil
	case uint32:
		return binary.AppendUvarint(append(buf, tagUint32), uint64(v)), nil
	case uint64:
		return binary.AppendUvarint(append(buf, tagUint64), v), nil
	case uint:
		return binary.AppendUvarint(append(buf, tagUint), uint64(v)), nil
	case float32:
		return binary.LittleEndian.AppendUint32(append(buf, tagFloat32), math.Float32bits(v)), nil
	case float64:
		return binary.LittleEndian.AppendUint64(append(buf, tagFloat64), math.Float64bits(v)), nil
	case string:
		buf = binary.AppendUvarint(append(buf, tagString), uint64(len(v)))
		return append(buf, v...), nil
	case []byte:
		buf = binary.AppendUvarint(append(buf, tagBytes), uint64(len(v)))
		return append(buf, v...), nil
	case decimal.Decimal:
		return appendRowDecimal(append(buf, tagDecimal), v), nil
	case time.Time:
		buf = binary.AppendVarint(append(buf, tagTime), v.Unix())
		return binary.AppendUvarint(buf, uint64(v.Nanosecond())), nil
	case types.Timespan:
		return binary.AppendVarint(append(buf, tagTimespan), int64(v)), nil
	case types.GeometryValue:
		g := v.Serialize()
		buf = binary.AppendUvarint(append(buf, tagGeometry), uint64(len(g)))
		return append(buf, g...), nil
	case sql.JSONWrapper:
		text, err := types.MarshallJson(v)
		if err != nil {
			return buf, fmt.Errorf("JSON value: %w", err)
		}
		buf = binary.AppendUvarint(append(buf, tagJSON), uint64(len(text)))
		return append(buf, text...), nil
	}
	return buf, fmt.Errorf("values of type %T cannot be stored", v)
}

func appendRowDecimal(buf []byte, d decimal.Decimal) []byte {
	coef := d.Coefficient()
	sign := byte(0)
	if coef.Sign() < 0 {
		sign = 1
		coef.Neg(coef)
	}
	var scratch [binary.MaxVarintLen64 + 1]byte
	head := binary.AppendVarint(scratch[:0], int64(d.Exponent()))
	head = append(head, sign)
	mag := coef.Bytes()
	buf = binary.AppendUvarint(buf, uint64(len(head)+len(mag)))
	buf = append(buf, head...)
	return append(buf, mag...)
}

// DecodeRow decodes from row value b the columns named by colIDs into dst
// and sets present[i] to whether column colIDs[i] is in the row; an absent
// column (added after the row was written) leaves dst[i] unchanged, for the
// caller to fill with the column's default. Columns of the row that are not
// wanted are skipped without being decoded. dst and present must be as long
// as colIDs.
//
// Values come back with the Go type they were encoded from, except JSON,
// which returns as types.JSONDocument, times, which return in UTC, and
// decimals, which keep their value and exponent but not their *big.Int.
// Strings share one copy of b; []byte values are copied: nothing aliases b.
func DecodeRow(b []byte, colIDs []int64, dst []any, present []bool) error {
	if len(dst) != len(colIDs) || len(present) != len(colIDs) {
		return fmt.Errorf("decode row: %d column IDs, %d destinations, %d presence flags", len(colIDs), len(dst), len(present))
	}
	clear(present)
	if len(b) == 0 {
		return fmt.Errorf("decode row: empty value: %w", ErrCorrupt)
	}
	if b[0] != RowFormatV1 {
		return fmt.Errorf("decode row: format byte %#x: %w", b[0], ErrCorrupt)
	}
	d := rowDecoder{b: b, pos: 1}
	next := 0 // column IDs usually come in the order they were written
	for d.pos < len(b) {
		id, err := d.columnID()
		if err != nil {
			return fmt.Errorf("decode row: column ID: %w", err)
		}
		i := columnIndex(colIDs, id, next)
		if i < 0 {
			if err := d.skipValue(); err != nil {
				return fmt.Errorf("decode row: column %d: %w", id, err)
			}
			continue
		}
		if present[i] {
			return fmt.Errorf("decode row: column %d appears twice: %w", id, ErrCorrupt)
		}
		if dst[i], err = d.value(); err != nil {
			return fmt.Errorf("decode row: column %d: %w", id, err)
		}
		present[i] = true
		next = i + 1
	}
	return nil
}

// columnIndex returns the position of column id in colIDs, -1 when it
// is not there; next is where it is guessed to be (column IDs usually
// come in the order they were asked for).
func columnIndex(colIDs []int64, id uint64, next int) int {
	if next < len(colIDs) && uint64(colIDs[next]) == id {
		return next
	}
	for j, want := range colIDs {
		if uint64(want) == id {
			return j
		}
	}
	return -1
}

// RowColumnsEqual reports whether row values a and b hold the same
// encoding of each column of colIDs: both without it, or both with the
// same tag and payload bytes. One encoding per Go value makes equal bytes
// equal values; a column present in one and absent from the other counts
// as different even if the absent one would take an equal default, which
// errs on the side of "changed".
func RowColumnsEqual(a, b []byte, colIDs []int64) (bool, error) {
	var spansA, spansB [8][]byte
	sa, sb := spansA[:0], spansB[:0]
	if len(colIDs) > len(spansA) {
		sa, sb = make([][]byte, 0, len(colIDs)), make([][]byte, 0, len(colIDs))
	}
	sa, sb = sa[:len(colIDs)], sb[:len(colIDs)]
	if err := rowColumnSpans(a, colIDs, sa); err != nil {
		return false, err
	}
	if err := rowColumnSpans(b, colIDs, sb); err != nil {
		return false, err
	}
	for i := range colIDs {
		if (sa[i] == nil) != (sb[i] == nil) || !bytes.Equal(sa[i], sb[i]) {
			return false, nil
		}
	}
	return true, nil
}

// RowColumnSpans sets spans[i] to the encoded value (tag and payload) of
// column colIDs[i] in row value b, nil when b lacks it: the bytes AppendRow
// wrote after the column's ID. The spans alias b. It reads b only as far
// as the last column asked for, so it does not check the rest of it.
func RowColumnSpans(b []byte, colIDs []int64, spans [][]byte) error {
	if len(spans) != len(colIDs) {
		return fmt.Errorf("row columns: %d column IDs, %d spans", len(colIDs), len(spans))
	}
	return rowColumnSpans(b, colIDs, spans)
}

// IsVerbatimSpan reports whether the encoded value span (as RowColumnSpans
// gives it) holds a NULL, a boolean, an integer, a string or a byte
// string: values that DecodeRow returns as they were and AppendRow writes
// back as the same bytes, so that a span can be copied into another row
// value in place of decoding and encoding its value. (Decimals, times,
// JSON and geometry are normalized on the way through; floats keep their
// bits but are left out too.)
func IsVerbatimSpan(span []byte) bool {
	if len(span) == 0 {
		return false
	}
	switch span[0] {
	case tagNull, tagBoolFalse, tagBoolTrue,
		tagInt8, tagInt16, tagInt32, tagInt64, tagInt,
		tagUint8, tagUint16, tagUint32, tagUint64, tagUint,
		tagString, tagBytes:
		return true
	}
	return false
}

// DecodeColumn decodes one encoded value span, as RowColumnSpans gives
// it, to what DecodeRow returns for that column (a string is a copy of
// the span's bytes, not of the whole row's): a reader that takes the
// spans of a row first decodes only the columns it comes to need.
func DecodeColumn(span []byte) (any, error) {
	d := rowDecoder{b: span}
	v, err := d.value()
	if err == nil && d.pos != len(span) {
		err = fmt.Errorf("%d bytes after the value: %w", len(span)-d.pos, ErrCorrupt)
	}
	if err != nil {
		return nil, fmt.Errorf("decode column: %w", err)
	}
	return v, nil
}

// SpanKind is what ColumnInt found in an encoded value span.
type SpanKind uint8

// The kinds of a span for ColumnInt.
const (
	// SpanOther: not an integer (a string, a TIME's types.Timespan, a
	// boolean...); DecodeColumn decodes it.
	SpanOther SpanKind = iota
	// SpanNull: NULL.
	SpanNull
	// SpanSigned: a signed integer (int8 ... int64, int), in the int64.
	SpanSigned
	// SpanUnsigned: an unsigned integer (uint8 ... uint64, uint), in the
	// uint64.
	SpanUnsigned
)

// ColumnInt reads the integer an encoded value span holds without boxing
// it into an interface value (Go allocates for every integer past 255),
// for a reader that compares or adds it: the value is the one DecodeColumn
// would return, widened. A value out of its tag's range is corrupt, as
// for DecodeColumn.
func ColumnInt(span []byte) (kind SpanKind, i int64, u uint64, err error) {
	if len(span) == 0 {
		return SpanOther, 0, 0, fmt.Errorf("decode column: %w", errTruncated)
	}
	t := span[0]
	switch t {
	case tagNull:
		return SpanNull, 0, 0, nil
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt:
		v, n := binary.Varint(span[1:])
		if n <= 0 || 1+n != len(span) {
			break
		}
		if (t == tagInt8 && int64(int8(v)) != v) || (t == tagInt16 && int64(int16(v)) != v) ||
			(t == tagInt32 && int64(int32(v)) != v) || (t == tagInt && int64(int(v)) != v) {
			return SpanOther, 0, 0, fmt.Errorf("decode column: value %d out of range of tag %#x: %w", v, t, ErrCorrupt)
		}
		return SpanSigned, v, 0, nil
	case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		v, n := binary.Uvarint(span[1:])
		if n <= 0 || 1+n != len(span) {
			break
		}
		if (t == tagUint8 && v > math.MaxUint8) || (t == tagUint16 && v > math.MaxUint16) ||
			(t == tagUint32 && v > math.MaxUint32) || (t == tagUint && uint64(uint(v)) != v) {
			return SpanOther, 0, 0, fmt.Errorf("decode column: value %d out of range of tag %#x: %w", v, t, ErrCorrupt)
		}
		return SpanUnsigned, 0, v, nil
	default:
		return SpanOther, 0, 0, nil
	}
	return SpanOther, 0, 0, fmt.Errorf("decode column: bad varint: %w", ErrCorrupt)
}

// rowColumnSpans sets spans[i] to the encoded value (tag and payload) of
// column colIDs[i] in row value b, nil when b lacks it.
func rowColumnSpans(b []byte, colIDs []int64, spans [][]byte) error {
	clear(spans)
	if len(b) == 0 || b[0] != RowFormatV1 {
		return fmt.Errorf("row columns: not a row value: %w", ErrCorrupt)
	}
	d := rowDecoder{b: b, pos: 1}
	// The walk stops once every column asked for is found (the columns
	// after them are not looked at: a reader of one column of a wide row
	// skips the rest), and guesses that the columns come in the order
	// asked, as they usually were written.
	found, next := 0, 0
	for d.pos < len(b) && found < len(colIDs) {
		id, err := d.columnID()
		if err != nil {
			return fmt.Errorf("row columns: column ID: %w", err)
		}
		start := d.pos
		if err := d.skipValue(); err != nil {
			return fmt.Errorf("row columns: column %d: %w", id, err)
		}
		i := columnIndex(colIDs, id, next)
		if i < 0 || spans[i] != nil {
			continue
		}
		next = i + 1
		for j := range colIDs {
			// An ID asked for twice gets the span at both places.
			if uint64(colIDs[j]) == id && spans[j] == nil {
				spans[j] = b[start:d.pos]
				found++
			}
		}
	}
	return nil
}

// RowColumnIDs returns the IDs of the columns stored in row value b, in the
// order they were written.
func RowColumnIDs(b []byte) ([]int64, error) {
	if len(b) == 0 || b[0] != RowFormatV1 {
		return nil, fmt.Errorf("row column IDs: not a row value: %w", ErrCorrupt)
	}
	d := rowDecoder{b: b, pos: 1}
	var ids []int64
	for d.pos < len(b) {
		id, err := d.uvarint()
		if err != nil {
			return ids, fmt.Errorf("row column IDs: %w", err)
		}
		if id > math.MaxInt64 {
			return ids, fmt.Errorf("row column IDs: ID %d: %w", id, ErrCorrupt)
		}
		if err := d.skip(); err != nil {
			return ids, fmt.Errorf("row column IDs: column %d: %w", id, err)
		}
		ids = append(ids, int64(id))
	}
	if err := checkColumnIDs(ids); err != nil {
		return ids, fmt.Errorf("row column IDs: %v: %w", err, ErrCorrupt)
	}
	return ids, nil
}

// rowDecoder reads one row value. str is b converted to a string once, on
// the first string column, so that every string column of the row is a
// substring of one allocation.
type rowDecoder struct {
	b   []byte
	pos int
	str string
}

var errTruncated = fmt.Errorf("truncated: %w", ErrCorrupt)

func (d *rowDecoder) uvarint() (uint64, error) {
	v, n := binary.Uvarint(d.b[d.pos:])
	if n <= 0 {
		return 0, fmt.Errorf("bad uvarint: %w", ErrCorrupt)
	}
	d.pos += n
	return v, nil
}

func (d *rowDecoder) varint() (int64, error) {
	v, n := binary.Varint(d.b[d.pos:])
	if n <= 0 {
		return 0, fmt.Errorf("bad varint: %w", ErrCorrupt)
	}
	d.pos += n
	return v, nil
}

// fixed returns the next n bytes.
func (d *rowDecoder) fixed(n int) ([]byte, error) {
	if len(d.b)-d.pos < n {
		return nil, errTruncated
	}
	p := d.b[d.pos : d.pos+n]
	d.pos += n
	return p, nil
}

// sized returns the offset and length of a uvarint-length-prefixed payload
// and moves past it.
func (d *rowDecoder) sized() (off, n int, err error) {
	l, err := d.uvarint()
	if err != nil {
		return 0, 0, err
	}
	if l > uint64(len(d.b)-d.pos) {
		return 0, 0, errTruncated
	}
	off = d.pos
	d.pos += int(l)
	return off, int(l), nil
}

func (d *rowDecoder) tag() (byte, error) {
	if d.pos >= len(d.b) {
		return 0, errTruncated
	}
	t := d.b[d.pos]
	d.pos++
	return t, nil
}

// skip moves past one tagged value.
// columnID reads a column ID: one byte inline for IDs below 128, the
// usual case.
func (d *rowDecoder) columnID() (uint64, error) {
	if d.pos < len(d.b) && d.b[d.pos] < 0x80 {
		id := uint64(d.b[d.pos])
		d.pos++
		return id, nil
	}
	return d.uvarint()
}

// skipValue is skip, with the common values (NULL, booleans, integers of
// up to 9 varint bytes, strings shorter than 128 bytes) stepped over
// inline: a reader of a few columns of a row steps over the others, and
// skip's calls were most of a scan's decoding.
func (d *rowDecoder) skipValue() error {
	b, p := d.b, d.pos
	if p < len(b) {
		switch b[p] {
		case tagNull, tagBoolFalse, tagBoolTrue:
			d.pos = p + 1
			return nil
		case tagInt8, tagInt16, tagInt32, tagInt64, tagInt, tagTimespan,
			tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
			// Nine varint bytes hold 63 bits: no overflow to check.
			for i := p + 1; i < len(b) && i < p+1+binary.MaxVarintLen64-1; i++ {
				if b[i] < 0x80 {
					d.pos = i + 1
					return nil
				}
			}
		case tagString, tagBytes:
			if p+1 < len(b) && b[p+1] < 0x80 {
				if end := p + 2 + int(b[p+1]); end <= len(b) {
					d.pos = end
					return nil
				}
			}
		}
	}
	return d.skip()
}

func (d *rowDecoder) skip() error {
	t, err := d.tag()
	if err != nil {
		return err
	}
	switch t {
	case tagNull, tagBoolFalse, tagBoolTrue:
		return nil
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt, tagTimespan,
		tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		_, err = d.uvarint() // a varint's extent is that of a uvarint
	case tagFloat32:
		_, err = d.fixed(4)
	case tagFloat64:
		_, err = d.fixed(8)
	case tagString, tagBytes, tagDecimal, tagJSON, tagGeometry:
		_, _, err = d.sized()
	case tagTime:
		if _, err = d.varint(); err == nil {
			_, err = d.uvarint()
		}
	default:
		err = fmt.Errorf("type tag %#x: %w", t, ErrCorrupt)
	}
	return err
}

// value decodes one tagged value.
func (d *rowDecoder) value() (any, error) {
	t, err := d.tag()
	if err != nil {
		return nil, err
	}
	switch t {
	case tagNull:
		return nil, nil
	case tagBoolFalse:
		return false, nil
	case tagBoolTrue:
		return true, nil
	case tagInt8, tagInt16, tagInt32, tagInt64, tagInt, tagTimespan:
		v, err := d.varint()
		if err != nil {
			return nil, err
		}
		return signedOfTag(t, v)
	case tagUint8, tagUint16, tagUint32, tagUint64, tagUint:
		v, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		return unsignedOfTag(t, v)
	case tagFloat32:
		p, err := d.fixed(4)
		if err != nil {
			return nil, err
		}
		return math.Float32frombits(binary.LittleEndian.Uint32(p)), nil
	case tagFloat64:
		p, err := d.fixed(8)
		if err != nil {
			return nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(p)), nil
	case tagString:
		off, n, err := d.sized()
		if err != nil {
			return nil, err
		}
		if d.str == "" {
			d.str = string(d.b)
		}
		return d.str[off : off+n], nil
	case tagBytes:
		off, n, err := d.sized()
		if err != nil {
			return nil, err
		}
		return bytes.Clone(d.b[off : off+n : off+n]), nil
	case tagDecimal:
		off, n, err := d.sized()
		if err != nil {
			return nil, err
		}
		return decodeRowDecimal(d.b[off : off+n])
	case tagTime:
		sec, err := d.varint()
		if err != nil {
			return nil, err
		}
		ns, err := d.uvarint()
		if err != nil {
			return nil, err
		}
		if ns >= 1e9 {
			return nil, fmt.Errorf("time nanoseconds %d: %w", ns, ErrCorrupt)
		}
		return time.Unix(sec, int64(ns)).UTC(), nil
	case tagJSON:
		off, n, err := d.sized()
		if err != nil {
			return nil, err
		}
		var doc any
		if err := json.Unmarshal(d.b[off:off+n], &doc); err != nil {
			return nil, fmt.Errorf("JSON text: %v: %w", err, ErrCorrupt)
		}
		return types.JSONDocument{Val: doc}, nil
	case tagGeometry:
		off, n, err := d.sized()
		if err != nil {
			return nil, err
		}
		return decodeGeometry(d.b[off : off+n])
	}
	return nil, fmt.Errorf("type tag %#x: %w", t, ErrCorrupt)
}

func signedOfTag(t byte, v int64) (any, error) {
	switch t {
	case tagInt8:
		if v < math.MinInt8 || v > math.MaxInt8 {
			break
		}
		return int8(v), nil
	case tagInt16:
		if v < math.MinInt16 || v > math.MaxInt16 {
			break
		}
		return int16(v), nil
	case tagInt32:
		if v < math.MinInt32 || v > math.MaxInt32 {
			break
		}
		return int32(v), nil
	case tagInt64:
		return v, nil
	case tagInt:
		if int64(int(v)) != v {
			break
		}
		return int(v), nil
	case tagTimespan:
		return types.Timespan(v), nil
	}
	return nil, fmt.Errorf("value %d out of range of tag %#x: %w", v, t, ErrCorrupt)
}

func unsignedOfTag(t byte, v uint64) (any, error) {
	switch t {
	case tagUint8:
		if v > math.MaxUint8 {
			break
		}
		return uint8(v), nil
	case tagUint16:
		if v > math.MaxUint16 {
			break
		}
		return uint16(v), nil
	case tagUint32:
		if v > math.MaxUint32 {
			break
		}
		return uint32(v), nil
	case tagUint64:
		return v, nil
	case tagUint:
		if uint64(uint(v)) != v {
			break
		}
		return uint(v), nil
	}
	return nil, fmt.Errorf("value %d out of range of tag %#x: %w", v, t, ErrCorrupt)
}

// ColumnDecimal reads the DECIMAL an encoded value span holds as coef *
// 10^exp without allocating, for a reader that adds it (the value
// DecodeColumn returns is decimal.New(coef, exp)); ok is false, with no
// error, for a span of another tag and for a coefficient past an int64,
// which DecodeColumn decodes.
func ColumnDecimal(span []byte) (coef int64, exp int32, ok bool, err error) {
	if len(span) == 0 || span[0] != tagDecimal {
		return 0, 0, false, nil
	}
	d := rowDecoder{b: span, pos: 1}
	off, n, err := d.sized()
	if err == nil && d.pos != len(span) {
		err = fmt.Errorf("%d bytes after the value: %w", len(span)-d.pos, ErrCorrupt)
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("decode column: %w", err)
	}
	p := span[off : off+n]
	e, k := binary.Varint(p)
	if k <= 0 || e < math.MinInt32 || e > math.MaxInt32 {
		return 0, 0, false, fmt.Errorf("decode column: decimal exponent: %w", ErrCorrupt)
	}
	p = p[k:]
	if len(p) == 0 || p[0] > 1 {
		return 0, 0, false, fmt.Errorf("decode column: decimal sign: %w", ErrCorrupt)
	}
	neg, mag := p[0] == 1, p[1:]
	if len(mag) > 8 || (len(mag) == 8 && mag[0] >= 0x80) {
		return 0, 0, false, nil
	}
	for _, c := range mag {
		coef = coef<<8 | int64(c)
	}
	if neg {
		coef = -coef
	}
	return coef, int32(e), true, nil
}

func decodeRowDecimal(p []byte) (any, error) {
	exp, n := binary.Varint(p)
	if n <= 0 || exp < math.MinInt32 || exp > math.MaxInt32 {
		return nil, fmt.Errorf("decimal exponent: %w", ErrCorrupt)
	}
	p = p[n:]
	if len(p) == 0 || p[0] > 1 {
		return nil, fmt.Errorf("decimal sign: %w", ErrCorrupt)
	}
	neg, mag := p[0] == 1, p[1:]
	if len(mag) < 8 || (len(mag) == 8 && mag[0] < 0x80) {
		// Fits an int64: skip the big.Int round trip.
		var v int64
		for _, c := range mag {
			v = v<<8 | int64(c)
		}
		if neg {
			v = -v
		}
		return decimal.New(v, int32(exp)), nil
	}
	coef := new(big.Int).SetBytes(mag)
	if neg {
		coef.Neg(coef)
	}
	return decimal.NewFromBigInt(coef, int32(exp)), nil
}

// Geometry: GMS's decoder trusts the counts inside WKB (it allocates and
// slices by them), so the bytes are checked here first; GMS's own encoder
// writes little-endian WKB only, and nothing else is accepted.
const (
	wkbPoint = 1 + iota
	wkbLine
	wkbPoly
	wkbMultiPoint
	wkbMultiLine
	wkbMultiPoly
	wkbGeomColl
)

const (
	wkbPointSize  = 16
	wkbCountSize  = 4
	wkbHeaderSize = 5 // endianness byte, type
	// maxGeometryDepth bounds the nesting of geometry collections.
	maxGeometryDepth = 32
)

var errBadGeometry = fmt.Errorf("geometry: %w", ErrCorrupt)

func decodeGeometry(p []byte) (any, error) {
	if len(p) < 4+wkbHeaderSize {
		return nil, errBadGeometry
	}
	typ, err := wkbHeader(p[4:])
	if err != nil {
		return nil, err
	}
	rest, err := checkWKBBody(p[4+wkbHeaderSize:], typ, 0)
	if err != nil {
		return nil, err
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("geometry: %d trailing bytes: %w", len(rest), ErrCorrupt)
	}
	g, _, err := types.GeometryType{}.Convert(context.Background(), p)
	if err != nil {
		return nil, fmt.Errorf("geometry: %v: %w", err, ErrCorrupt)
	}
	return g, nil
}

// wkbHeader reads a little-endian WKB header and returns its type.
func wkbHeader(p []byte) (uint32, error) {
	if len(p) < wkbHeaderSize || p[0] != 1 {
		return 0, errBadGeometry
	}
	return binary.LittleEndian.Uint32(p[1:]), nil
}

// wkbCount reads an element count and checks that count elements of at
// least minSize bytes each can fit in what follows.
func wkbCount(p []byte, minSize int) (uint32, []byte, error) {
	if len(p) < wkbCountSize {
		return 0, p, errBadGeometry
	}
	c := binary.LittleEndian.Uint32(p)
	p = p[wkbCountSize:]
	if uint64(c)*uint64(minSize) > uint64(len(p)) {
		return 0, p, errBadGeometry
	}
	return c, p, nil
}

// checkWKBBody checks the body of a WKB geometry of type typ and returns
// the bytes after it.
func checkWKBBody(p []byte, typ uint32, depth int) ([]byte, error) {
	if depth > maxGeometryDepth {
		return p, errBadGeometry
	}
	var (
		c   uint32
		err error
	)
	switch typ {
	case wkbPoint:
		if len(p) < wkbPointSize {
			return p, errBadGeometry
		}
		return p[wkbPointSize:], nil
	case wkbLine:
		if c, p, err = wkbCount(p, wkbPointSize); err != nil {
			return p, err
		}
		return p[int(c)*wkbPointSize:], nil
	case wkbPoly:
		if c, p, err = wkbCount(p, wkbCountSize); err != nil {
			return p, err
		}
		for ; c > 0 && err == nil; c-- {
			p, err = checkWKBBody(p, wkbLine, depth+1)
		}
		return p, err
	case wkbMultiPoint, wkbMultiLine, wkbMultiPoly, wkbGeomColl:
		if c, p, err = wkbCount(p, wkbHeaderSize); err != nil {
			return p, err
		}
		for ; c > 0; c-- {
			sub, err := wkbHeader(p)
			if err != nil {
				return p, err
			}
			if typ != wkbGeomColl && sub != typ-3 { // multi-X holds X
				return p, errBadGeometry
			}
			if p, err = checkWKBBody(p[wkbHeaderSize:], sub, depth+1); err != nil {
				return p, err
			}
		}
		return p, nil
	}
	return p, fmt.Errorf("geometry type %d: %w", typ, ErrCorrupt)
}
