package wire

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// maxVitessParams is the most parameters a statement may have for vitess
// to read its COM_STMT_EXECUTE: vitess sizes the NULL bitmap as
// (count+7)/8 in 16 bits, which wraps to 0 from 65,529 on. Executes of
// statements with more (up to MySQL's 65,535) are decoded here.
const maxVitessParams = 65528

// MySQL's error for a command whose bytes do not parse:
// ER_MALFORMED_PACKET.
const (
	codeMalformed  = 1835
	stateMalformed = "HY000"
	msgMalformed   = "Malformed communication packet."
)

// The layout of a COM_STMT_EXECUTE payload: the command byte, the
// statement id (4 bytes), the cursor flags (1), the iteration count (4),
// then, for a statement with parameters, the NULL bitmap ((count+7)/8
// bytes, bit i for parameter i), the new-parameters-bound flag (1), when
// it is 1 a type (1) and a flags byte (0x80: unsigned) per parameter, and
// the values of the parameters that are neither NULL nor sent before with
// COM_STMT_SEND_LONG_DATA, in the binary protocol's formats.
const (
	executeBitmapAt = 10
)

// prepared returns the statement id vitess prepared on this connection,
// nil when there is none (or no vitess connection).
func (c *Conn) prepared(id uint32) *mysql.PrepareData {
	if c.vc == nil {
		return nil
	}
	return c.vc.PrepareData[id]
}

// noteLongData records that parameter param of statement id got its value
// from a COM_STMT_SEND_LONG_DATA (which vitess keeps among the statement's
// bound variables): its executes carry no value for it.
func (c *Conn) noteLongData(id uint32, param uint16) {
	if p := c.prepared(id); p == nil || param >= p.ParamsCount {
		return
	}
	if c.longData == nil {
		c.longData = make(map[uint32]map[uint16]bool)
	}
	if c.longData[id] == nil {
		c.longData[id] = make(map[uint16]bool)
	}
	c.longData[id][param] = true
}

// execute looks at a COM_STMT_EXECUTE of statement prepare, of n payload
// bytes, before vitess reads it. vitess decodes some parameters wrongly
// or not at all:
//
//   - all of them, for a statement of more than 65,528 parameters (see
//     maxVitessParams);
//   - a DATETIME, TIMESTAMP or TIME with microseconds, which it writes
//     unpadded (5 µs as ".5", half a second);
//   - a zero DATE or DATETIME (length 0), which it gives as " ";
//   - a length-encoded string longer than the packet, on which it
//     panics and drops the connection.
//
// Such an execute is decoded here and its values put among the
// statement's bound variables, where vitess finds them and reads none
// from the packet; one that does not decode is answered with error 1835;
// any other execute passes through untouched.
func (c *Conn) execute(prepare *mysql.PrepareData, n int) error {
	id := prepare.StatementID
	long := c.longData[id]
	delete(c.longData, id)
	if int(prepare.ParamsCount) <= maxVitessParams && headerLen+n <= readBufferSize {
		pkt, err := c.r.Peek(headerLen + n)
		if err != nil {
			return err
		}
		decode, err := vitessMisreads(prepare, pkt[headerLen:], long)
		if err == nil && !decode {
			c.continued = false
			c.left = headerLen + n
			return nil
		}
	}
	packets, payload, seq, err := c.readCommand()
	if err != nil {
		return err
	}
	if err := bind(prepare, payload, long); err != nil {
		c.atCommand = true
		return c.writeError(seq+1, codeMalformed, stateMalformed, msgMalformed)
	}
	if int(prepare.ParamsCount) > maxVitessParams {
		// vitess reads a NULL bitmap of no bytes, then the
		// new-parameters flag where the bitmap is.
		packets[headerLen+executeBitmapAt] = 0
	}
	c.pending = packets
	return nil
}

// errMalformed is a parameter that does not decode.
var errMalformed = errors.New("malformed COM_STMT_EXECUTE")

// vitessMisreads walks the parameters of payload, a COM_STMT_EXECUTE of
// prepare, and reports whether vitess would read one of them wrongly (see
// Conn.execute); errMalformed when they do not decode. An execute vitess
// refuses before reading parameters (an iteration count other than 1)
// is left to it.
func vitessMisreads(prepare *mysql.PrepareData, payload []byte, long map[uint16]bool) (bool, error) {
	if len(payload) >= executeBitmapAt && binary.LittleEndian.Uint32(payload[6:]) != 1 || numbersOnly(prepare, payload) {
		return false, nil
	}
	misread := false
	err := walkParams(prepare, payload, long, func(_ int, typ querypb.Type, _ []byte) {
		switch typ {
		case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime, sqltypes.Time:
			misread = true
		}
	})
	return misread, err
}

// numbersOnly reports whether every parameter of payload, a
// COM_STMT_EXECUTE of prepare, is a number or NULL (by the types the
// packet sends, or else the statement's last ones): vitess reads those
// right, and within the packet, so they need no walk (a prepared point
// select's).
func numbersOnly(prepare *mysql.PrepareData, payload []byte) bool {
	n := int(prepare.ParamsCount)
	at := executeBitmapAt + (n+7)/8
	if at >= len(payload) || payload[at] != 1 {
		for _, t := range prepare.ParamsType[:min(n, len(prepare.ParamsType))] {
			switch querypb.Type(t) {
			case sqltypes.Null, sqltypes.Int8, sqltypes.Uint8, sqltypes.Int16, sqltypes.Uint16, sqltypes.Int24, sqltypes.Uint24,
				sqltypes.Int32, sqltypes.Uint32, sqltypes.Int64, sqltypes.Uint64, sqltypes.Float32, sqltypes.Float64, sqltypes.Year:
			default:
				return false
			}
		}
		return len(prepare.ParamsType) >= n
	}
	types := payload[at+1:]
	if len(types) < 2*n {
		return false
	}
	for i := 0; i < n; i++ {
		// MYSQL_TYPE_TINY, SHORT, LONG, FLOAT, DOUBLE, NULL, LONGLONG,
		// INT24, YEAR.
		switch types[2*i] {
		case 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x08, 0x09, 0x0d:
		default:
			return false
		}
	}
	return true
}

// bind decodes the parameters of payload, a COM_STMT_EXECUTE of prepare,
// into prepare's bound variables v1, v2, ..., as vitess represents them:
// the same types (mysql's binary types by sqltypes.MySQLToType) and
// values, but for the temporal values vitess misreads. The parameters in
// long keep the values COM_STMT_SEND_LONG_DATA gave them. prepare is
// changed only when the whole payload decodes.
func bind(prepare *mysql.PrepareData, payload []byte, long map[uint16]bool) error {
	vars := make(map[string]*querypb.BindVariable, prepare.ParamsCount)
	for i := range long {
		name := "v" + strconv.Itoa(int(i)+1)
		if v := prepare.BindVars[name]; v != nil {
			vars[name] = v
		}
	}
	types, err := walkParamsTypes(prepare, payload, long, func(i int, typ querypb.Type, raw []byte) {
		name := "v" + strconv.Itoa(i+1)
		if _, ok := vars[name]; !ok {
			vars[name] = sqltypes.ValueBindVariable(value(typ, raw))
		}
	})
	if err != nil {
		return err
	}
	prepare.ParamsType = types
	prepare.BindVars = vars
	return nil
}

// walkParams calls fn with each parameter of payload, a COM_STMT_EXECUTE
// of prepare, that the packet carries (not those in long whose values
// came in COM_STMT_SEND_LONG_DATA, which vitess keeps as bound
// variables until the execute): its index, type (sqltypes.Null for a
// NULL) and bytes (see decoder.field).
func walkParams(prepare *mysql.PrepareData, payload []byte, long map[uint16]bool, fn func(i int, typ querypb.Type, raw []byte)) error {
	_, err := walkParamsTypes(prepare, payload, long, fn)
	return err
}

// walkParamsTypes is walkParams; it also returns the parameters' types,
// the packet's when it sends them, else those of the statement's last
// execute.
func walkParamsTypes(prepare *mysql.PrepareData, payload []byte, long map[uint16]bool, fn func(i int, typ querypb.Type, raw []byte)) ([]int32, error) {
	n := int(prepare.ParamsCount)
	d := decoder{b: payload, pos: executeBitmapAt}
	nulls, ok := d.bytes((n + 7) / 8)
	if !ok {
		return nil, errMalformed
	}
	types := prepare.ParamsType
	if bound, _ := d.byte(); bound == 1 {
		types = make([]int32, n)
		for i := range types {
			typ, ok1 := d.byte()
			flags, ok2 := d.byte()
			if !ok1 || !ok2 {
				return nil, errMalformed
			}
			t, err := sqltypes.MySQLToType(int64(typ), int64(flags)>>2)
			if err != nil {
				return nil, errMalformed
			}
			types[i] = int32(t)
		}
	}
	if len(types) < n {
		return nil, errMalformed
	}
	for i := 0; i < n; i++ {
		if long[uint16(i)] && prepare.BindVars["v"+strconv.Itoa(i+1)] != nil {
			continue
		}
		typ := querypb.Type(types[i])
		if nulls[i/8]&(1<<(i%8)) != 0 {
			typ = sqltypes.Null
		}
		raw, ok := d.field(typ)
		if !ok {
			return nil, errMalformed
		}
		fn(i, typ, raw)
	}
	return types, nil
}

// decoder reads the values of the binary protocol from b at pos.
type decoder struct {
	b   []byte
	pos int
}

func (d *decoder) bytes(n int) ([]byte, bool) {
	if n < 0 || len(d.b)-d.pos < n {
		return nil, false
	}
	b := d.b[d.pos : d.pos+n]
	d.pos += n
	return b, true
}

func (d *decoder) byte() (byte, bool) {
	b, ok := d.bytes(1)
	if !ok {
		return 0, false
	}
	return b[0], true
}

func (d *decoder) uint16() (uint16, bool) {
	b, ok := d.bytes(2)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint16(b), true
}

func (d *decoder) uint32() (uint32, bool) {
	b, ok := d.bytes(4)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint32(b), true
}

func (d *decoder) uint64() (uint64, bool) {
	b, ok := d.bytes(8)
	if !ok {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b), true
}

// lenencString reads a length-encoded string: a length (one byte below
// 0xfb, or 0xfc, 0xfd, 0xfe and 2, 3 or 8 bytes) and that many bytes.
func (d *decoder) lenencString() ([]byte, bool) {
	first, ok := d.byte()
	if !ok {
		return nil, false
	}
	var n uint64
	switch {
	case first < 0xfb:
		n = uint64(first)
	case first == 0xfc:
		v, ok := d.uint16()
		if !ok {
			return nil, false
		}
		n = uint64(v)
	case first == 0xfd:
		b, ok := d.bytes(3)
		if !ok {
			return nil, false
		}
		n = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
	case first == 0xfe:
		if n, ok = d.uint64(); !ok {
			return nil, false
		}
	default:
		return nil, false
	}
	if n > uint64(len(d.b)-d.pos) {
		return nil, false
	}
	return d.bytes(int(n))
}

// field reads the bytes of one parameter of type typ: the 1, 2, 4 or 8
// bytes of a number; the fields of a DATE, DATETIME, TIMESTAMP or TIME
// after their length byte (0, 4, 7 or 11 bytes; 0, 8 or 12); the bytes
// of a length-encoded string for every other type; none for a NULL.
func (d *decoder) field(typ querypb.Type) ([]byte, bool) {
	switch typ {
	case sqltypes.Null:
		return nil, true
	case sqltypes.Int8, sqltypes.Uint8:
		return d.bytes(1)
	case sqltypes.Int16, sqltypes.Uint16, sqltypes.Year:
		return d.bytes(2)
	case sqltypes.Int24, sqltypes.Int32, sqltypes.Uint24, sqltypes.Uint32, sqltypes.Float32:
		return d.bytes(4)
	case sqltypes.Int64, sqltypes.Uint64, sqltypes.Float64:
		return d.bytes(8)
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime:
		return d.sized(4, 7, 11)
	case sqltypes.Time:
		return d.sized(8, 12)
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar, sqltypes.Char, sqltypes.VarBinary,
		sqltypes.Bit, sqltypes.Enum, sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		return d.lenencString()
	}
	return nil, false
}

// value is the parameter of type typ whose bytes field read, as vitess
// represents it: integers and floats as numbers, dates and times as text
// (as MySQL writes them, where vitess writes each field without leading
// zeros), everything else as VARBINARY bytes.
func value(typ querypb.Type, b []byte) sqltypes.Value {
	switch typ {
	case sqltypes.Int8:
		return sqltypes.NewInt64(int64(int8(b[0])))
	case sqltypes.Uint8:
		return sqltypes.NewUint64(uint64(b[0]))
	case sqltypes.Int16, sqltypes.Year:
		return sqltypes.NewInt64(int64(int16(binary.LittleEndian.Uint16(b))))
	case sqltypes.Uint16:
		return sqltypes.NewUint64(uint64(binary.LittleEndian.Uint16(b)))
	case sqltypes.Int24, sqltypes.Int32:
		return sqltypes.NewInt64(int64(int32(binary.LittleEndian.Uint32(b))))
	case sqltypes.Uint24, sqltypes.Uint32:
		return sqltypes.NewUint64(uint64(binary.LittleEndian.Uint32(b)))
	case sqltypes.Int64:
		return sqltypes.NewInt64(int64(binary.LittleEndian.Uint64(b)))
	case sqltypes.Uint64:
		return sqltypes.NewUint64(binary.LittleEndian.Uint64(b))
	case sqltypes.Float32:
		return sqltypes.NewFloat64(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))))
	case sqltypes.Float64:
		return sqltypes.NewFloat64(math.Float64frombits(binary.LittleEndian.Uint64(b)))
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime:
		return sqltypes.NewVarChar(datetime(typ, b))
	case sqltypes.Time:
		return sqltypes.NewVarChar(timeValue(b))
	case sqltypes.Null:
		return sqltypes.NULL
	}
	return sqltypes.MakeTrusted(sqltypes.VarBinary, append([]byte(nil), b...))
}

// sized reads a length, 0 or one of sizes, and that many bytes.
func (d *decoder) sized(sizes ...byte) ([]byte, bool) {
	size, ok := d.byte()
	if !ok || size != 0 && !slices.Contains(sizes, size) {
		return nil, false
	}
	return d.bytes(int(size))
}

// datetime writes the fields of a DATE, DATETIME or TIMESTAMP of type
// typ as MySQL writes the value: year (2 bytes), month, day, hour, minute,
// second (1 each) and microseconds (4), as many as there are (4, 7 or 11
// bytes). None is the zero date.
func datetime(typ querypb.Type, b []byte) string {
	if len(b) == 0 {
		if typ == sqltypes.Date {
			return "0000-00-00"
		}
		return "0000-00-00 00:00:00"
	}
	out := make([]byte, 0, len("0000-00-00 00:00:00.000000"))
	out = pad(out, uint64(binary.LittleEndian.Uint16(b)), 4)
	out = pad(append(out, '-'), uint64(b[2]), 2)
	out = pad(append(out, '-'), uint64(b[3]), 2)
	if len(b) >= 7 {
		out = pad(append(out, ' '), uint64(b[4]), 2)
		out = pad(append(out, ':'), uint64(b[5]), 2)
		out = pad(append(out, ':'), uint64(b[6]), 2)
	}
	if len(b) == 11 {
		out = pad(append(out, '.'), uint64(binary.LittleEndian.Uint32(b[7:])), 6)
	}
	return string(out)
}

// timeValue writes the fields of a TIME as MySQL writes the value: a
// sign (1: negative), days (4), hours, minutes, seconds (1 each) and
// microseconds (4), as many as there are (8 or 12 bytes); the days are
// counted into the hours. None is 00:00:00.
func timeValue(b []byte) string {
	if len(b) == 0 {
		return "00:00:00"
	}
	var out []byte
	if b[0] == 1 {
		out = append(out, '-')
	}
	out = pad(out, uint64(b[5])+uint64(binary.LittleEndian.Uint32(b[1:]))*24, 2)
	out = pad(append(out, ':'), uint64(b[6]), 2)
	out = pad(append(out, ':'), uint64(b[7]), 2)
	if len(b) == 12 {
		out = pad(append(out, '.'), uint64(binary.LittleEndian.Uint32(b[8:])), 6)
	}
	return string(out)
}

// pad appends v in decimal, with leading zeros to width digits.
func pad(b []byte, v uint64, width int) []byte {
	start := len(b)
	b = strconv.AppendUint(b, v, 10)
	for n := len(b) - start; n < width; n++ {
		b = append(b, 0)
		copy(b[start+1:], b[start:])
		b[start] = '0'
	}
	return b
}
