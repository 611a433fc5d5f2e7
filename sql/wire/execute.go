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

// manyParams reports whether id is a statement whose executes vitess would
// read wrongly.
func (c *Conn) manyParams(id uint32) bool {
	if c.vc == nil {
		return false
	}
	p, ok := c.vc.PrepareData[id]
	return ok && p.ParamsCount > maxVitessParams
}

// noteLongData records that parameter param of statement id got its value
// from a COM_STMT_SEND_LONG_DATA (which vitess keeps among the statement's
// bound variables), when Conn decodes that statement's executes.
func (c *Conn) noteLongData(id uint32, param uint16) {
	if !c.manyParams(id) {
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

// execute reads a COM_STMT_EXECUTE of statement id, which has more
// parameters than vitess reads right, and puts its values among the
// statement's bound variables. vitess then reads the packet with its
// new-parameters flag where it looks for it (it reads a NULL bitmap of
// no bytes) cleared, and skips every parameter, since each has a value.
// A packet that does not decode is answered here with error 1835.
func (c *Conn) execute(id uint32) error {
	packets, payload, seq, err := c.readCommand()
	if err != nil {
		return err
	}
	long := c.longData[id]
	delete(c.longData, id)
	if err := bind(c.vc.PrepareData[id], payload, long); err != nil {
		c.atCommand = true
		return c.writeError(seq+1, codeMalformed, stateMalformed, msgMalformed)
	}
	packets[headerLen+executeBitmapAt] = 0
	c.pending = packets
	return nil
}

// errMalformed is a parameter that does not decode.
var errMalformed = errors.New("malformed COM_STMT_EXECUTE")

// bind decodes the parameters of payload, a COM_STMT_EXECUTE of prepare,
// into prepare's bound variables v1, v2, ..., as vitess does for
// statements with fewer parameters: the same types (mysql's binary types
// by sqltypes.MySQLToType) and the same values. The parameters in long
// keep the values COM_STMT_SEND_LONG_DATA gave them. prepare is changed
// only when the whole payload decodes.
func bind(prepare *mysql.PrepareData, payload []byte, long map[uint16]bool) error {
	n := int(prepare.ParamsCount)
	d := decoder{b: payload, pos: executeBitmapAt}
	nulls, ok := d.bytes((n + 7) / 8)
	if !ok {
		return errMalformed
	}
	types := prepare.ParamsType
	if bound, _ := d.byte(); bound == 1 {
		types = make([]int32, n)
		for i := range types {
			typ, ok1 := d.byte()
			flags, ok2 := d.byte()
			if !ok1 || !ok2 {
				return errMalformed
			}
			t, err := sqltypes.MySQLToType(int64(typ), int64(flags)>>2)
			if err != nil {
				return errMalformed
			}
			types[i] = int32(t)
		}
	}
	if len(types) < n {
		return errMalformed
	}
	vars := make(map[string]*querypb.BindVariable, n)
	for i := 0; i < n; i++ {
		name := "v" + strconv.Itoa(i+1)
		if long[uint16(i)] {
			if v := prepare.BindVars[name]; v != nil {
				vars[name] = v
				continue
			}
		}
		v := sqltypes.NULL
		if nulls[i/8]&(1<<(i%8)) == 0 {
			if v, ok = d.value(querypb.Type(types[i])); !ok {
				return errMalformed
			}
		}
		vars[name] = sqltypes.ValueBindVariable(v)
	}
	prepare.ParamsType = types
	prepare.BindVars = vars
	return nil
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
	b, _ := d.bytes(int(n))
	return append([]byte(nil), b...), true
}

// value reads one parameter of type typ as vitess represents it: integers
// and floats as numbers, dates and times as text (each field in decimal
// without padding), everything else as VARBINARY bytes.
func (d *decoder) value(typ querypb.Type) (sqltypes.Value, bool) {
	switch typ {
	case sqltypes.Null:
		return sqltypes.NULL, true
	case sqltypes.Int8:
		v, ok := d.byte()
		return sqltypes.NewInt64(int64(int8(v))), ok
	case sqltypes.Uint8:
		v, ok := d.byte()
		return sqltypes.NewUint64(uint64(v)), ok
	case sqltypes.Int16, sqltypes.Year:
		v, ok := d.uint16()
		return sqltypes.NewInt64(int64(int16(v))), ok
	case sqltypes.Uint16:
		v, ok := d.uint16()
		return sqltypes.NewUint64(uint64(v)), ok
	case sqltypes.Int24, sqltypes.Int32:
		v, ok := d.uint32()
		return sqltypes.NewInt64(int64(int32(v))), ok
	case sqltypes.Uint24, sqltypes.Uint32:
		v, ok := d.uint32()
		return sqltypes.NewUint64(uint64(v)), ok
	case sqltypes.Int64:
		v, ok := d.uint64()
		return sqltypes.NewInt64(int64(v)), ok
	case sqltypes.Uint64:
		v, ok := d.uint64()
		return sqltypes.NewUint64(v), ok
	case sqltypes.Float32:
		v, ok := d.uint32()
		return sqltypes.NewFloat64(float64(math.Float32frombits(v))), ok
	case sqltypes.Float64:
		v, ok := d.uint64()
		return sqltypes.NewFloat64(math.Float64frombits(v)), ok
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime:
		return d.datetime()
	case sqltypes.Time:
		return d.time()
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar, sqltypes.Char, sqltypes.VarBinary,
		sqltypes.Bit, sqltypes.Enum, sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		b, ok := d.lenencString()
		return sqltypes.MakeTrusted(sqltypes.VarBinary, b), ok
	}
	return sqltypes.NULL, false
}

// sized reads a length, 0 or one of sizes, and that many bytes.
func (d *decoder) sized(sizes ...byte) ([]byte, bool) {
	size, ok := d.byte()
	if !ok || size != 0 && !slices.Contains(sizes, size) {
		return nil, false
	}
	return d.bytes(int(size))
}

// datetime reads a DATE, DATETIME or TIMESTAMP: a length (0, 4, 7 or 11),
// then year (2), month, day, hour, minute, second (1 each) and
// microseconds (4), as many as the length holds. vitess gives the value
// of length 0 (a zero date) as " ".
func (d *decoder) datetime() (sqltypes.Value, bool) {
	b, ok := d.sized(4, 7, 11)
	if !ok {
		return sqltypes.NULL, false
	}
	size := len(b)
	if size == 0 {
		return sqltypes.NewVarChar(" "), true
	}
	s := itoa(int(binary.LittleEndian.Uint16(b))) + "-" + itoa(int(b[2])) + "-" + itoa(int(b[3]))
	if size >= 7 {
		s += " " + itoa(int(b[4])) + ":" + itoa(int(b[5])) + ":" + itoa(int(b[6]))
	}
	if size == 11 {
		s += "." + itoa(int(binary.LittleEndian.Uint32(b[7:])))
	}
	return sqltypes.NewVarChar(s), true
}

// time reads a TIME: a length (0, 8 or 12), then a sign (1: negative),
// days (4), hours, minutes, seconds (1 each) and microseconds (4), as
// many as the length holds; the days are counted into the hours.
func (d *decoder) time() (sqltypes.Value, bool) {
	b, ok := d.sized(8, 12)
	if !ok {
		return sqltypes.NULL, false
	}
	size := len(b)
	if size == 0 {
		return sqltypes.NewVarChar("00:00:00"), true
	}
	s := ""
	if b[0] == 1 {
		s = "-"
	}
	hours := uint32(b[5]) + binary.LittleEndian.Uint32(b[1:])*24
	s += strconv.FormatUint(uint64(hours), 10) + ":" + itoa(int(b[6])) + ":" + itoa(int(b[7]))
	if size == 12 {
		s += "." + itoa(int(binary.LittleEndian.Uint32(b[8:])))
	}
	return sqltypes.NewVarChar(s), true
}

func itoa(v int) string { return strconv.Itoa(v) }
