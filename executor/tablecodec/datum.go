package tablecodec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"time"

	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/shopspring/decimal"
)

// Flag bytes of the memcomparable datum key encoding. NULL is the smallest
// flag so that NULL sorts before every value, as in MySQL.
const (
	flagNull     byte = 0x00
	flagBytes    byte = 0x01
	flagInt      byte = 0x03
	flagUint     byte = 0x04
	flagFloat    byte = 0x05
	flagDecimal  byte = 0x06
	flagDuration byte = 0x07
	flagTime     byte = 0x08
)

// Memcomparable bytes: groups of groupSize bytes, each followed by a marker
// byte that is groupMarker minus the number of padding bytes in the group.
const (
	groupSize   = 8
	groupMarker = 0xFF
	groupPad    = 0x00
)

// Sign bytes of an encoded decimal, ordered negative < zero < positive.
const (
	decNegative byte = 0x01
	decZero     byte = 0x02
	decPositive byte = 0x03
)

const signBit = uint64(1) << 63

// ErrCorrupt is wrapped by every decoding error: the bytes are not a valid
// encoding (truncated, unknown flag, bad padding).
var ErrCorrupt = errors.New("corrupt encoding")

// EncodeKey appends the memcomparable encoding of vals to buf and returns
// the extended buffer. Encoded values compare, as byte strings, in the order
// of the values they encode, value by value, and no encoding is a prefix of
// another, so a concatenation of encodings sorts like a tuple.
//
// Accepted Go types: nil; int, int8..int64 and types.Timespan (signed);
// uint, uint8..uint64 (unsigned, so enum, set and bit values); float32 and
// float64 (not NaN); string and []byte; decimal.Decimal; time.Time. A string
// under a case-insensitive collation must be passed as its collation sort
// key (bytes): the key encodes what compares, not what was stored.
func EncodeKey(buf []byte, vals ...any) ([]byte, error) {
	for i, v := range vals {
		var err error
		buf, err = encodeKeyDatum(buf, v)
		if err != nil {
			return buf, fmt.Errorf("encode key value %d: %w", i, err)
		}
	}
	return buf, nil
}

func encodeKeyDatum(buf []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(buf, flagNull), nil
	case int:
		return appendIntDatum(buf, int64(v)), nil
	case int8:
		return appendIntDatum(buf, int64(v)), nil
	case int16:
		return appendIntDatum(buf, int64(v)), nil
	case int32:
		return appendIntDatum(buf, int64(v)), nil
	case int64:
		return appendIntDatum(buf, v), nil
	case uint:
		return appendUintDatum(buf, uint64(v)), nil
	case uint8:
		return appendUintDatum(buf, uint64(v)), nil
	case uint16:
		return appendUintDatum(buf, uint64(v)), nil
	case uint32:
		return appendUintDatum(buf, uint64(v)), nil
	case uint64:
		return appendUintDatum(buf, v), nil
	case float32:
		return appendFloatDatum(buf, float64(v))
	case float64:
		return appendFloatDatum(buf, v)
	case string:
		return EncodeBytes(append(buf, flagBytes), []byte(v)), nil
	case []byte:
		return EncodeBytes(append(buf, flagBytes), v), nil
	case decimal.Decimal:
		return appendDecimal(append(buf, flagDecimal), v), nil
	case types.Timespan:
		return EncodeInt(append(buf, flagDuration), int64(v)), nil
	case time.Time:
		buf = EncodeInt(append(buf, flagTime), v.Unix())
		return binary.BigEndian.AppendUint32(buf, uint32(v.Nanosecond())), nil
	}
	return buf, fmt.Errorf("type %T cannot be part of a key", v)
}

// AppendKeyInt appends the key encoding of a signed integer to buf:
// EncodeKey(buf, v) for any signed integer type, without boxing v.
func AppendKeyInt(buf []byte, v int64) []byte { return appendIntDatum(buf, v) }

// AppendKeyUint appends the key encoding of an unsigned integer to buf:
// EncodeKey(buf, v) for any unsigned integer type, without boxing v.
func AppendKeyUint(buf []byte, v uint64) []byte { return appendUintDatum(buf, v) }

// AppendKeyNull appends the key encoding of NULL to buf: EncodeKey(buf,
// nil).
func AppendKeyNull(buf []byte) []byte { return append(buf, flagNull) }

func appendIntDatum(buf []byte, v int64) []byte { return EncodeInt(append(buf, flagInt), v) }

func appendUintDatum(buf []byte, v uint64) []byte {
	return binary.BigEndian.AppendUint64(append(buf, flagUint), v)
}

func appendFloatDatum(buf []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) {
		return buf, errors.New("NaN cannot be part of a key")
	}
	return binary.BigEndian.AppendUint64(append(buf, flagFloat), floatToOrdered(f)), nil
}

// EncodeInt appends v as 8 big-endian bytes with the sign bit flipped, so
// that negative values sort before positive ones. It carries no flag byte:
// table IDs, index IDs and int handles in keys use it bare.
func EncodeInt(buf []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(buf, uint64(v)^signBit)
}

// DecodeInt reads a value written by EncodeInt and returns the rest of b.
func DecodeInt(b []byte) (rest []byte, v int64, err error) {
	if len(b) < 8 {
		return b, 0, fmt.Errorf("int needs 8 bytes, have %d: %w", len(b), ErrCorrupt)
	}
	return b[8:], int64(binary.BigEndian.Uint64(b) ^ signBit), nil
}

// floatToOrdered maps a float to a uint64 whose unsigned order is the
// float's numeric order: non-negative floats get the sign bit set, negative
// floats have every bit inverted (larger magnitude, smaller key). -0 and +0
// map to the same value because they compare equal.
func floatToOrdered(f float64) uint64 {
	if f == 0 {
		f = 0 // fold -0 into +0
	}
	u := math.Float64bits(f)
	if f >= 0 {
		return u | signBit
	}
	return ^u
}

func orderedToFloat(u uint64) float64 {
	if u&signBit != 0 {
		return math.Float64frombits(u &^ signBit)
	}
	return math.Float64frombits(^u)
}

// EncodeBytes appends the memcomparable encoding of data: groups of 8 bytes,
// the last padded with zeros, each followed by 0xFF minus its padding count.
// The marker makes "ab" sort before "ab\x00" and keeps the encoding
// prefix-free. It carries no flag byte.
func EncodeBytes(buf, data []byte) []byte {
	for len(data) >= groupSize {
		buf = append(buf, data[:groupSize]...)
		buf = append(buf, groupMarker)
		data = data[groupSize:]
	}
	pad := groupSize - len(data)
	buf = append(buf, data...)
	for i := 0; i < pad; i++ {
		buf = append(buf, groupPad)
	}
	return append(buf, groupMarker-byte(pad))
}

// DecodeBytes reads a value written by EncodeBytes, appends it to dst and
// returns the rest of b.
func DecodeBytes(b, dst []byte) (rest, out []byte, err error) {
	out = dst
	for {
		if len(b) < groupSize+1 {
			return b, out, fmt.Errorf("bytes group needs %d bytes, have %d: %w", groupSize+1, len(b), ErrCorrupt)
		}
		group, marker := b[:groupSize], b[groupSize]
		b = b[groupSize+1:]
		if marker == groupMarker {
			out = append(out, group...)
			continue
		}
		pad := int(groupMarker - marker)
		if pad > groupSize {
			return b, out, fmt.Errorf("bytes group marker %#x: %w", marker, ErrCorrupt)
		}
		for _, c := range group[groupSize-pad:] {
			if c != groupPad {
				return b, out, fmt.Errorf("bytes group padding %#x: %w", c, ErrCorrupt)
			}
		}
		return b, append(out, group[:groupSize-pad]...), nil
	}
}

// appendDecimal encodes d so that byte order is numeric order. The value is
// normalised to sign, exponent e and digits d1 d2 ... dn (d1 != 0, dn != 0)
// with |d| = 0.d1d2...dn * 10^e. Then:
//
//	zero:     decZero
//	positive: decPositive | EncodeInt(e) | digit pairs, each as 1+pair (1..100) | 0x00
//	negative: decNegative | EncodeInt(^e) | digit pairs, each as 0xFF-(1+pair) | 0xFF
//
// A larger exponent means a larger magnitude; for equal exponents the digit
// strings compare lexicographically, and the terminator sorts a shorter
// string (a prefix, so a smaller magnitude) first. An odd last digit d forms
// the pair d0, which is the same number. Negative values invert every byte
// after the sign so that larger magnitudes sort first. 1.5 and 1.50 encode
// identically, as they compare equal.
func appendDecimal(buf []byte, d decimal.Decimal) []byte {
	sign := d.Sign()
	if sign == 0 {
		return append(buf, decZero)
	}
	coef := d.Coefficient()
	digits := coef.Abs(coef).String()
	exp := int64(d.Exponent())
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	e := exp + int64(len(digits))
	var inv byte // XOR mask: 0xFF for negative values
	if sign > 0 {
		buf = append(buf, decPositive)
		buf = EncodeInt(buf, e)
	} else {
		inv = 0xFF
		buf = append(buf, decNegative)
		buf = EncodeInt(buf, ^e)
	}
	for i := 0; i < len(digits); i += 2 {
		pair := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			pair += digits[i+1] - '0'
		}
		buf = append(buf, (pair+1)^inv)
	}
	return append(buf, 0x00^inv)
}

// decodeDecimal reads a value written by appendDecimal.
func decodeDecimal(b []byte) (rest []byte, d decimal.Decimal, err error) {
	if len(b) < 1 {
		return b, d, fmt.Errorf("decimal sign missing: %w", ErrCorrupt)
	}
	var inv byte
	switch b[0] {
	case decZero:
		return b[1:], decimal.Decimal{}, nil
	case decPositive:
	case decNegative:
		inv = 0xFF
	default:
		return b, d, fmt.Errorf("decimal sign %#x: %w", b[0], ErrCorrupt)
	}
	b, e, err := DecodeInt(b[1:])
	if err != nil {
		return b, d, fmt.Errorf("decimal exponent: %w", err)
	}
	if inv != 0 {
		e = ^e
	}
	var digits []byte
	for {
		if len(b) == 0 {
			return b, d, fmt.Errorf("decimal digits unterminated: %w", ErrCorrupt)
		}
		c := b[0] ^ inv
		b = b[1:]
		if c == 0 {
			break
		}
		if c > 100 {
			return b, d, fmt.Errorf("decimal digit pair %d: %w", c-1, ErrCorrupt)
		}
		digits = append(digits, '0'+(c-1)/10, '0'+(c-1)%10)
	}
	// Only the canonical form decodes, so that every decimal has exactly
	// one encoding: a non-zero first digit and a non-zero last digit.
	if len(digits) == 0 || digits[0] == '0' {
		return b, d, fmt.Errorf("decimal digits %q not normalised: %w", digits, ErrCorrupt)
	}
	if digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1] // the pad of an odd digit count
		if digits[len(digits)-1] == '0' {
			return b, d, fmt.Errorf("decimal digits %q not normalised: %w", digits, ErrCorrupt)
		}
	}
	// value = 0.digits * 10^e = digits * 10^(e - len(digits))
	exp := e - int64(len(digits))
	if exp < math.MinInt32 || exp > math.MaxInt32 {
		return b, d, fmt.Errorf("decimal exponent %d out of range: %w", exp, ErrCorrupt)
	}
	coef, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return b, d, fmt.Errorf("decimal digits %q: %w", digits, ErrCorrupt)
	}
	if inv != 0 {
		coef.Neg(coef)
	}
	return b, decimal.NewFromBigInt(coef, int32(exp)), nil
}

// DecodeKey decodes one value written by EncodeKey and returns the rest of
// b. Values come back as the widest Go type of their kind: nil, int64,
// uint64, float64, []byte (for strings too), decimal.Decimal (normalised:
// 1.50 returns as 1.5), types.Timespan and time.Time (UTC). A string encoded
// through a collation sort key decodes to the sort key, not the string: use
// it for handles and tests, and read column values from the row.
func DecodeKey(b []byte) (rest []byte, v any, err error) {
	if len(b) == 0 {
		return b, nil, fmt.Errorf("key value missing: %w", ErrCorrupt)
	}
	flag, b := b[0], b[1:]
	switch flag {
	case flagNull:
		return b, nil, nil
	case flagInt:
		return DecodeInt(b)
	case flagUint:
		if len(b) < 8 {
			return b, nil, fmt.Errorf("uint needs 8 bytes, have %d: %w", len(b), ErrCorrupt)
		}
		return b[8:], binary.BigEndian.Uint64(b), nil
	case flagFloat:
		if len(b) < 8 {
			return b, nil, fmt.Errorf("float needs 8 bytes, have %d: %w", len(b), ErrCorrupt)
		}
		return b[8:], orderedToFloat(binary.BigEndian.Uint64(b)), nil
	case flagBytes:
		rest, out, err := DecodeBytes(b, nil)
		if out == nil {
			out = []byte{}
		}
		return rest, out, err
	case flagDecimal:
		return decodeDecimal(b)
	case flagDuration:
		rest, v, err := DecodeInt(b)
		return rest, types.Timespan(v), err
	case flagTime:
		rest, sec, err := DecodeInt(b)
		if err != nil {
			return rest, nil, fmt.Errorf("time seconds: %w", err)
		}
		if len(rest) < 4 {
			return rest, nil, fmt.Errorf("time nanoseconds need 4 bytes, have %d: %w", len(rest), ErrCorrupt)
		}
		ns := binary.BigEndian.Uint32(rest)
		if ns >= 1e9 {
			return rest, nil, fmt.Errorf("time nanoseconds %d: %w", ns, ErrCorrupt)
		}
		return rest[4:], time.Unix(sec, int64(ns)).UTC(), nil
	}
	return b, nil, fmt.Errorf("key value flag %#x: %w", flag, ErrCorrupt)
}

// DecodeKeys decodes every value in b.
func DecodeKeys(b []byte) ([]any, error) {
	var vals []any
	for len(b) > 0 {
		var v any
		var err error
		if b, v, err = DecodeKey(b); err != nil {
			return vals, fmt.Errorf("key value %d: %w", len(vals), err)
		}
		vals = append(vals, v)
	}
	return vals, nil
}

// SkipKey returns b without its first encoded value, without decoding it.
func SkipKey(b []byte) (rest []byte, err error) {
	if len(b) == 0 {
		return b, fmt.Errorf("key value missing: %w", ErrCorrupt)
	}
	flag, b := b[0], b[1:]
	need := 0
	switch flag {
	case flagNull:
	case flagInt, flagUint, flagFloat, flagDuration:
		need = 8
	case flagTime:
		need = 12
	case flagBytes:
		for {
			if len(b) < groupSize+1 {
				return b, fmt.Errorf("bytes group needs %d bytes, have %d: %w", groupSize+1, len(b), ErrCorrupt)
			}
			marker := b[groupSize]
			b = b[groupSize+1:]
			if marker != groupMarker {
				return b, nil
			}
		}
	case flagDecimal:
		if len(b) == 0 {
			return b, fmt.Errorf("decimal sign missing: %w", ErrCorrupt)
		}
		var end byte
		switch b[0] {
		case decZero:
			return b[1:], nil
		case decPositive:
			end = 0x00
		case decNegative:
			end = 0xFF
		default:
			return b, fmt.Errorf("decimal sign %#x: %w", b[0], ErrCorrupt)
		}
		if len(b) < 1+8 {
			return b, fmt.Errorf("decimal exponent truncated: %w", ErrCorrupt)
		}
		for i := 1 + 8; i < len(b); i++ {
			if b[i] == end {
				return b[i+1:], nil
			}
		}
		return b, fmt.Errorf("decimal digits unterminated: %w", ErrCorrupt)
	default:
		return b, fmt.Errorf("key value flag %#x: %w", flag, ErrCorrupt)
	}
	if len(b) < need {
		return b, fmt.Errorf("value with flag %#x needs %d bytes, have %d: %w", flag, need, len(b), ErrCorrupt)
	}
	return b[need:], nil
}
