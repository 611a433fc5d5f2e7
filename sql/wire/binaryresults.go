package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// BinaryResultSet returns the payloads of a binary-protocol result set
// (the answer to COM_STMT_EXECUTE) of fields and rows, laid out as
// TextResultSet's but for the rows: each row is 0x00, a NULL bitmap of
// (columns+7+2)/8 bytes whose bits start at bit 2, then each value that is
// not NULL in the binary protocol's form of its column's type (see
// binaryValue).
func BinaryResultSet(fields []*querypb.Field, rows [][]sqltypes.Value, status uint16, deprecateEOF bool) ([][]byte, error) {
	return resultSet(fields, rows, status, deprecateEOF, binaryRow)
}

// binaryRow is the payload of one row of a binary result set.
func binaryRow(row []sqltypes.Value) ([]byte, error) {
	bitmap := (len(row) + 7 + 2) / 8
	p := make([]byte, 1+bitmap, 1+bitmap+8*len(row))
	for i, v := range row {
		if v.IsNull() {
			p[1+(i+2)/8] |= 1 << ((i + 2) % 8)
			continue
		}
		var err error
		if p, err = appendBinaryValue(p, v); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// appendBinaryValue appends v in the binary protocol's form of its type
// ("Binary Protocol Value" in MySQL's documentation): integers little
// endian in 1, 2, 4 or 8 bytes; FLOAT and DOUBLE as IEEE 754 in 4 and 8;
// DATE, DATETIME and TIMESTAMP as a length (0, 4, 7 or 11) then year (2),
// month, day, hour, minute, second and microseconds (4); TIME as a length
// (0, 8 or 12) then sign, days (4), hours, minutes, seconds and
// microseconds (4); anything else as a length-encoded string of its text.
// A DATE, DATETIME or TIMESTAMP of empty text is the zero date (length 0,
// see the handler's zeroDatesEmpty).
func appendBinaryValue(p []byte, v sqltypes.Value) ([]byte, error) {
	raw := string(v.Raw())
	bad := func(err error) error { return fmt.Errorf("binary value of %v %q: %w", v.Type(), raw, err) }
	switch typ := v.Type(); {
	case sqltypes.IsSigned(typ) || typ == sqltypes.Year:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return nil, bad(err)
		}
		return appendInt(p, uint64(n), intSize(typ)), nil
	case sqltypes.IsUnsigned(typ):
		n, err := strconv.ParseUint(raw, 10, 64)
		if err != nil {
			return nil, bad(err)
		}
		return appendInt(p, n, intSize(typ)), nil
	case typ == sqltypes.Float32:
		f, err := strconv.ParseFloat(raw, 32)
		if err != nil {
			return nil, bad(err)
		}
		return binary.LittleEndian.AppendUint32(p, math.Float32bits(float32(f))), nil
	case typ == sqltypes.Float64:
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return nil, bad(err)
		}
		return binary.LittleEndian.AppendUint64(p, math.Float64bits(f)), nil
	case typ == sqltypes.Date || typ == sqltypes.Datetime || typ == sqltypes.Timestamp:
		b, err := binaryDatetime(raw)
		if err != nil {
			return nil, bad(err)
		}
		return append(p, b...), nil
	case typ == sqltypes.Time:
		b, err := binaryTime(raw)
		if err != nil {
			return nil, bad(err)
		}
		return append(p, b...), nil
	}
	return appendLenencString(p, v.Raw()), nil
}

// intSize is the number of bytes of an integer type in the binary
// protocol.
func intSize(typ querypb.Type) int {
	switch typ {
	case sqltypes.Int8, sqltypes.Uint8:
		return 1
	case sqltypes.Int16, sqltypes.Uint16, sqltypes.Year:
		return 2
	case sqltypes.Int24, sqltypes.Uint24, sqltypes.Int32, sqltypes.Uint32:
		return 4
	}
	return 8
}

// appendInt appends the size low bytes of n, little endian.
func appendInt(p []byte, n uint64, size int) []byte {
	for i := 0; i < size; i++ {
		p = append(p, byte(n>>(8*i)))
	}
	return p
}

// binaryDatetime is the binary form of a DATE, DATETIME or TIMESTAMP
// written "YYYY-MM-DD[ HH:MM:SS[.ffffff]]".
func binaryDatetime(s string) ([]byte, error) {
	if s == "" {
		return []byte{0}, nil
	}
	date, clock, _ := strings.Cut(s, " ")
	var y, mo, d, h, mi, sec, micro int
	if _, err := fmt.Sscanf(date, "%d-%d-%d", &y, &mo, &d); err != nil {
		return nil, err
	}
	if clock != "" {
		var err error
		if h, mi, sec, micro, err = parseClock(clock); err != nil {
			return nil, err
		}
	}
	b := []byte{0, byte(y), byte(y >> 8), byte(mo), byte(d)}
	switch {
	case micro != 0:
		b = append(b, byte(h), byte(mi), byte(sec))
		b = binary.LittleEndian.AppendUint32(b, uint32(micro))
	case h != 0 || mi != 0 || sec != 0:
		b = append(b, byte(h), byte(mi), byte(sec))
	case y == 0 && mo == 0 && d == 0:
		b = b[:1]
	}
	b[0] = byte(len(b) - 1)
	return b, nil
}

// binaryTime is the binary form of a TIME written "[-]H+:MM:SS[.ffffff]".
func binaryTime(s string) ([]byte, error) {
	neg := strings.HasPrefix(s, "-")
	h, mi, sec, micro, err := parseClock(strings.TrimPrefix(s, "-"))
	if err != nil {
		return nil, err
	}
	b := []byte{0, 0}
	if neg {
		b[1] = 1
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(h/24))
	b = append(b, byte(h%24), byte(mi), byte(sec))
	switch {
	case micro != 0:
		b = binary.LittleEndian.AppendUint32(b, uint32(micro))
	case h == 0 && mi == 0 && sec == 0:
		b = b[:1]
	}
	b[0] = byte(len(b) - 1)
	return b, nil
}

// parseClock reads "H+:MM:SS[.ffffff]" (fewer fraction digits are tenths,
// hundredths, ...).
func parseClock(s string) (h, mi, sec, micro int, err error) {
	whole, frac, _ := strings.Cut(s, ".")
	if _, err = fmt.Sscanf(whole, "%d:%d:%d", &h, &mi, &sec); err != nil {
		return
	}
	if frac != "" {
		if len(frac) > 6 {
			frac = frac[:6]
		}
		if micro, err = strconv.Atoi(frac + strings.Repeat("0", 6-len(frac))); err != nil {
			return
		}
	}
	return
}
