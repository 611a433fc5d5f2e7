package wirefuzz

import (
	"bufio"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// Command bytes of the client/server protocol that the fuzz targets and
// their seeds use.
const (
	ComQuit         = 0x01
	ComInitDB       = 0x02
	ComQuery        = 0x03
	ComFieldList    = 0x04
	ComPing         = 0x0e
	ComStmtPrepare  = 0x16
	ComStmtExecute  = 0x17
	ComStmtLongData = 0x18
	ComStmtClose    = 0x19
	ComStmtReset    = 0x1a
)

// Capability flags this client announces: protocol 4.1 with plugin
// authentication and multi-statements, and no CLIENT_DEPRECATE_EOF, so
// that result sets end with EOF packets as classic clients expect.
const (
	capLongPassword      = 0x00000001
	capLongFlag          = 0x00000004
	capConnectWithDB     = 0x00000008
	capProtocol41        = 0x00000200
	capTransactions      = 0x00002000
	capSecureConnection  = 0x00008000
	capMultiStatements   = 0x00010000
	capMultiResults      = 0x00020000
	capPluginAuth        = 0x00080000
	capPSMultiResults    = 0x00040000
	capPluginAuthLenenc  = 0x00200000
	clientCapabilities   = capLongPassword | capLongFlag | capProtocol41 | capTransactions | capSecureConnection | capMultiStatements | capMultiResults | capPluginAuth | capPluginAuthLenenc
	nativePassword       = "mysql_native_password"
	cachingSha2Password  = "caching_sha2_password"
	utf8mb4GeneralCI     = 45
	maxPacketPayload     = 1<<24 - 1
	defaultMaxPacketSize = 1 << 24
)

// Server status flags (SERVER_STATUS_*) that the greeting and every OK
// and EOF packet carry.
const (
	StatusInTrans     = 0x0001
	StatusAutocommit  = 0x0002
	StatusMoreResults = 0x0008
	// StatusInTransReadOnly is SERVER_STATUS_IN_TRANS_READONLY.
	StatusInTransReadOnly = 0x2000
)

// ServerError is an ERR packet from the server.
type ServerError struct {
	Code    uint16
	State   string
	Message string
}

func (e *ServerError) Error() string {
	return fmt.Sprintf("server error %d (%s): %s", e.Code, e.State, e.Message)
}

// Greeting is what the server's initial handshake packet (protocol 10)
// says.
type Greeting struct {
	ServerVersion string
	ConnectionID  uint32
	Capabilities  uint32
	// Salt is the 20-byte scramble the password proof is computed with.
	Salt       []byte
	AuthPlugin string
	// Status is the server status flags of the greeting.
	Status uint16
}

// Conn is a raw MySQL protocol connection: it frames and reads packets but
// keeps no state beyond the next sequence id, so that a test can write
// anything at all to the server, including bytes that are not packets.
type Conn struct {
	nc  net.Conn
	r   *bufio.Reader
	seq byte
	// status is the status flags of the last OK or EOF packet read.
	status uint16
	// Collation is the collation ID Authenticate asks for; 0 means
	// utf8mb4_general_ci (45), as go-sql-driver asks.
	Collation byte
	// NoMultiResults leaves CLIENT_MULTI_RESULTS out of the capabilities
	// Authenticate announces, as an old client does.
	NoMultiResults bool
	// PSMultiResults adds CLIENT_PS_MULTI_RESULTS to the capabilities
	// Authenticate announces: the client reads a prepared CALL's OUT
	// parameters (a result set flagged SERVER_PS_OUT_PARAMS), as
	// MariaDB Connector/J and libmysqlclient do.
	PSMultiResults bool
}

// Dial connects to addr and reads the server's greeting. Every read and
// write of the connection must complete before deadline.
func Dial(addr string, deadline time.Time) (*Conn, *Greeting, error) {
	d := net.Dialer{Deadline: deadline}
	nc, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if err := nc.SetDeadline(deadline); err != nil {
		nc.Close()
		return nil, nil, err
	}
	c := &Conn{nc: nc, r: bufio.NewReader(nc)}
	payload, err := c.ReadPacket()
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("read greeting: %w", err)
	}
	g, err := parseGreeting(payload)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return c, g, nil
}

// Close closes the connection.
func (c *Conn) Close() error { return c.nc.Close() }

// CloseWrite half-closes the connection: the server reads EOF after what
// was written, and may still answer.
func (c *Conn) CloseWrite() error {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		return tc.CloseWrite()
	}
	return errors.New("not a TCP connection")
}

// SetDeadline changes the deadline of every later read and write.
func (c *Conn) SetDeadline(t time.Time) error { return c.nc.SetDeadline(t) }

// WriteRaw writes b as it is, with no framing.
func (c *Conn) WriteRaw(b []byte) error {
	_, err := c.nc.Write(b)
	return err
}

// WritePacket frames payload with the next sequence id and writes it,
// split into packets of at most 2^24-1 bytes as the protocol requires.
func (c *Conn) WritePacket(payload []byte) error {
	for {
		n := min(len(payload), maxPacketPayload)
		if err := c.WriteRaw(Frame(c.seq, payload[:n])); err != nil {
			return err
		}
		c.seq++
		payload = payload[n:]
		if n < maxPacketPayload {
			return nil
		}
	}
}

// WriteCommand starts a new command (sequence id 0) with payload.
func (c *Conn) WriteCommand(payload []byte) error {
	c.seq = 0
	return c.WritePacket(payload)
}

// ReadPacket reads one packet (joining the parts of a payload of 2^24-1
// bytes or more) and remembers its sequence id.
func (c *Conn) ReadPacket() ([]byte, error) {
	var out []byte
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
			return nil, err
		}
		n := int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
		c.seq = hdr[3] + 1
		start := len(out)
		out = append(out, make([]byte, n)...)
		if _, err := io.ReadFull(c.r, out[start:]); err != nil {
			return nil, fmt.Errorf("packet of %d bytes: %w", n, err)
		}
		if n < maxPacketPayload {
			return out, nil
		}
	}
}

// ReadAll reads everything the server sends until it closes the
// connection or the deadline passes.
func (c *Conn) ReadAll() ([]byte, error) {
	return io.ReadAll(c.r)
}

// Frame returns payload behind a packet header with sequence id seq. The
// length is taken modulo 2^24: callers that want an honest header keep
// payloads shorter than that.
func Frame(seq byte, payload []byte) []byte {
	n := len(payload)
	out := make([]byte, 4, 4+n)
	out[0], out[1], out[2], out[3] = byte(n), byte(n>>8), byte(n>>16), seq
	return append(out, payload...)
}

// SplitFrames cuts a byte stream into packet payloads. rest is a trailing
// part that is not a whole packet (nil when there is none).
func SplitFrames(b []byte) (payloads [][]byte, rest []byte) {
	for len(b) >= 4 {
		n := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		if len(b) < 4+n {
			break
		}
		payloads = append(payloads, b[4:4+n])
		b = b[4+n:]
	}
	if len(b) == 0 {
		return payloads, nil
	}
	return payloads, b
}

// parseGreeting decodes the initial handshake packet (protocol 10).
func parseGreeting(p []byte) (*Greeting, error) {
	if len(p) > 0 && p[0] == 0xff {
		return nil, fmt.Errorf("greeting: %w", parseError(p))
	}
	r := reader{b: p}
	if v := r.byte(); v != 10 {
		return nil, fmt.Errorf("greeting: protocol version %d, want 10", v)
	}
	g := &Greeting{ServerVersion: r.nulString(), ConnectionID: r.uint32()}
	g.Salt = append(g.Salt, r.bytes(8)...)
	r.byte() // filler
	g.Capabilities = uint32(r.uint16())
	r.byte() // character set
	g.Status = r.uint16()
	g.Capabilities |= uint32(r.uint16()) << 16
	saltLen := int(r.byte())
	r.bytes(10) // reserved
	if g.Capabilities&capSecureConnection != 0 {
		g.Salt = append(g.Salt, r.bytes(max(13, saltLen-8))...)
	}
	if len(g.Salt) > 20 {
		g.Salt = g.Salt[:20] // the last byte of part 2 is a NUL
	}
	if g.Capabilities&capPluginAuth != 0 {
		g.AuthPlugin = r.nulString()
	}
	if r.err != nil {
		return nil, fmt.Errorf("greeting %x: %w", p, r.err)
	}
	return g, nil
}

// HandshakeResponse builds the HandshakeResponse41 packet payload that
// logs user in with password to database db ("" for none), answering
// greeting g with mysql_native_password.
func HandshakeResponse(g *Greeting, user, password, db string) []byte {
	return handshakeResponse(g, user, password, db, utf8mb4GeneralCI)
}

// handshakeResponse is HandshakeResponse asking for collation.
func handshakeResponse(g *Greeting, user, password, db string, collation byte) []byte {
	caps := uint32(clientCapabilities)
	if db != "" {
		caps |= capConnectWithDB
	}
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, caps)
	b = binary.LittleEndian.AppendUint32(b, defaultMaxPacketSize)
	b = append(b, collation)
	b = append(b, make([]byte, 23)...)
	b = append(append(b, user...), 0)
	auth := NativePasswordProof(g.Salt, password)
	b = appendLenencInt(b, uint64(len(auth)))
	b = append(b, auth...)
	if db != "" {
		b = append(append(b, db...), 0)
	}
	return append(append(b, nativePassword...), 0)
}

// NativePasswordProof is mysql_native_password's answer to salt:
// SHA1(password) XOR SHA1(salt + SHA1(SHA1(password))), empty for an empty
// password.
func NativePasswordProof(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha1.Sum([]byte(password))
	h2 := sha1.Sum(h1[:])
	h := sha1.New()
	h.Write(salt)
	h.Write(h2[:])
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// cachingSha2Proof is caching_sha2_password's fast-path answer to salt:
// SHA256(password) XOR SHA256(SHA256(SHA256(password)) + salt).
func cachingSha2Proof(salt []byte, password string) []byte {
	if password == "" {
		return nil
	}
	h1 := sha256.Sum256([]byte(password))
	h2 := sha256.Sum256(h1[:])
	h := sha256.New()
	h.Write(h2[:])
	h.Write(salt)
	out := h.Sum(nil)
	for i := range out {
		out[i] ^= h1[i]
	}
	return out
}

// Authenticate sends the handshake response for greeting g and follows the
// server through an auth method switch until it accepts (nil) or refuses
// (a *ServerError).
func (c *Conn) Authenticate(g *Greeting, user, password, db string) error {
	c.seq = 1
	collation := c.Collation
	if collation == 0 {
		collation = utf8mb4GeneralCI
	}
	resp := handshakeResponse(g, user, password, db, collation)
	if c.NoMultiResults {
		binary.LittleEndian.PutUint32(resp, binary.LittleEndian.Uint32(resp)&^capMultiResults)
	}
	if c.PSMultiResults {
		binary.LittleEndian.PutUint32(resp, binary.LittleEndian.Uint32(resp)|capPSMultiResults)
	}
	if err := c.WritePacket(resp); err != nil {
		return fmt.Errorf("write handshake response: %w", err)
	}
	for range 4 {
		p, err := c.ReadPacket()
		if err != nil {
			return fmt.Errorf("read auth result: %w", err)
		}
		if len(p) == 0 {
			return errors.New("empty auth result packet")
		}
		switch p[0] {
		case 0x00:
			c.status = okStatus(p)
			return nil
		case 0xff:
			return parseError(p)
		case 0xfe: // auth switch request: plugin name, then its salt
			r := reader{b: p[1:]}
			plugin := r.nulString()
			salt := r.rest()
			if n := len(salt); n > 0 && salt[n-1] == 0 {
				salt = salt[:n-1]
			}
			var proof []byte
			switch plugin {
			case nativePassword:
				proof = NativePasswordProof(salt, password)
			case cachingSha2Password:
				proof = cachingSha2Proof(salt, password)
			default:
				return fmt.Errorf("server asks for auth plugin %q", plugin)
			}
			if err := c.WritePacket(proof); err != nil {
				return fmt.Errorf("write auth switch response: %w", err)
			}
		case 0x01: // more data: caching_sha2_password's fast auth result
			if len(p) == 2 && p[1] == 3 {
				continue // fast auth succeeded; the OK packet follows
			}
			return fmt.Errorf("server wants full authentication (%x): needs TLS", p)
		default:
			return fmt.Errorf("unexpected auth packet %x", p)
		}
	}
	return errors.New("authentication did not finish")
}

// Result is one result of a command: the rows of its result set (none
// for a statement answered with an OK packet) and the status flags of the
// OK or EOF packet that ended it.
type Result struct {
	// Columns are the column definitions of a result set.
	Columns []Column
	// Rows are the rows of a text result set; NULL is "NULL".
	Rows [][]string
	// Binary are the row packets of a binary result set, undecoded.
	Binary [][]byte
	// Status is the status flags of the packet that ended the result.
	Status uint16
	// Warnings is the warning count of the OK or EOF packet that ended
	// the result; Info an OK packet's human-readable info ("Rows
	// matched: 1  Changed: 1  Warnings: 0"), as the packet's rest holds
	// it.
	Warnings uint16
	Info     string
	// AffectedRows and LastInsertID are an OK packet's.
	AffectedRows, LastInsertID uint64
}

// Column is what a column definition (Protocol::ColumnDefinition41) says
// of a result set's column.
type Column struct {
	// Schema is the database of the column's table.
	Schema string
	// Table is the table the column is of, by the alias the query gave
	// it; OrgTable the table's own name (a view's, a derived table's
	// alias).
	Table, OrgTable string
	// Name is the column's name in the result (its alias); OrgName the
	// table column's own name, empty for an expression.
	Name, OrgName string
	Charset       uint16
	Length        uint32
	Type          byte
	Flags         uint16
	Decimals      byte
}

// parseColumn decodes column definition p.
func parseColumn(p []byte) (Column, error) {
	r := reader{b: p}
	r.lenencBytes() // catalog
	var col Column
	col.Schema = string(r.lenencBytes())
	col.Table = string(r.lenencBytes())
	col.OrgTable = string(r.lenencBytes())
	col.Name = string(r.lenencBytes())
	col.OrgName = string(r.lenencBytes())
	r.lenencInt() // length of the fixed fields
	col.Charset = r.uint16()
	col.Length = r.uint32()
	col.Type = r.byte()
	col.Flags = r.uint16()
	col.Decimals = r.byte()
	if r.err != nil {
		return Column{}, fmt.Errorf("column definition %x: %w", p, r.err)
	}
	return col, nil
}

// Status returns the status flags of the last OK or EOF packet read.
func (c *Conn) Status() uint16 { return c.status }

// Query runs sql as COM_QUERY and returns the rows of its text result set
// (nil for a statement without one); NULL is returned as "NULL". The
// results of the further statements of a multi-statement query are read
// and dropped.
func (c *Conn) Query(sql string) ([][]string, error) {
	res, err := c.QueryAll(sql)
	if len(res) == 0 {
		return nil, err
	}
	return res[0].Rows, err
}

// QueryAll runs sql as COM_QUERY and returns its results, one per
// statement while the server says more follow (SERVER_MORE_RESULTS_EXISTS),
// up to the first error, which it returns.
func (c *Conn) QueryAll(sql string) ([]Result, error) {
	if err := c.WriteCommand(append([]byte{ComQuery}, sql...)); err != nil {
		return nil, err
	}
	return c.readResults(false)
}

// Param is a parameter of a prepared statement's execution as the binary
// protocol sends it: its type and flags (0x80: unsigned) and its value's
// bytes.
type Param struct {
	Type, Flags byte
	Value       []byte
}

// Execute runs the prepared statement id (COM_STMT_EXECUTE, no cursor)
// with args bound to its parameters, each nil (NULL), an int64, a string
// or a Param, and returns its results as QueryAll does.
func (c *Conn) Execute(id uint32, args ...any) ([]Result, error) {
	body, err := ExecuteBody(id, args...)
	if err != nil {
		return nil, err
	}
	if err := c.WriteCommand(body); err != nil {
		return nil, err
	}
	return c.readResults(true)
}

// ExecuteBody returns the COM_STMT_EXECUTE payload that runs statement id
// with args (see Execute).
func ExecuteBody(id uint32, args ...any) ([]byte, error) {
	b := binary.LittleEndian.AppendUint32([]byte{ComStmtExecute}, id)
	b = append(b, 0) // no cursor
	b = binary.LittleEndian.AppendUint32(b, 1)
	if len(args) == 0 {
		return b, nil
	}
	nulls := make([]byte, (len(args)+7)/8)
	var types, values []byte
	for i, a := range args {
		switch v := a.(type) {
		case nil:
			nulls[i/8] |= 1 << (i % 8)
			types = append(types, 0x06, 0) // MYSQL_TYPE_NULL
		case int64:
			types = append(types, 0x08, 0) // MYSQL_TYPE_LONGLONG
			values = binary.LittleEndian.AppendUint64(values, uint64(v))
		case string:
			types = append(types, 0xfd, 0) // MYSQL_TYPE_VAR_STRING
			values = AppendLenencString(values, v)
		case Param:
			types = append(types, v.Type, v.Flags)
			values = append(values, v.Value...)
		default:
			return nil, fmt.Errorf("execute: argument %d is a %T", i, a)
		}
	}
	b = append(b, nulls...)
	b = append(b, 1) // new parameters bound: their types follow
	b = append(b, types...)
	return append(b, values...), nil
}

// readResults reads the results of a command, binary result sets when
// binary.
func (c *Conn) readResults(binary bool) ([]Result, error) {
	var out []Result
	for {
		res, err := c.readResult(binary)
		if err != nil {
			return out, err
		}
		out = append(out, res)
		if res.Status&StatusMoreResults == 0 {
			return out, nil
		}
	}
}

// readResult reads one result: an OK packet, or a result set up to its
// closing EOF packet.
func (c *Conn) readResult(binary bool) (Result, error) {
	p, err := c.ReadPacket()
	if err != nil {
		return Result{}, err
	}
	switch {
	case len(p) == 0:
		return Result{}, errors.New("empty query response")
	case p[0] == 0x00:
		res := okResult(p)
		c.status = res.Status
		return res, nil
	case p[0] == 0xff:
		return Result{}, parseError(p)
	}
	r := reader{b: p}
	cols := r.lenencInt()
	if r.err != nil {
		return Result{}, fmt.Errorf("column count %x: %w", p, r.err)
	}
	var res Result
	for range cols {
		p, err := c.ReadPacket()
		if err != nil {
			return Result{}, err
		}
		col, err := parseColumn(p)
		if err != nil {
			return Result{}, err
		}
		res.Columns = append(res.Columns, col)
	}
	if err := c.readEOF(); err != nil {
		return Result{}, err
	}
	for {
		p, err := c.ReadPacket()
		if err != nil {
			return Result{}, err
		}
		if isEOF(p) {
			c.status = eofStatus(p)
			res.Status = c.status
			res.Warnings = eofWarnings(p)
			return res, nil
		}
		if p[0] == 0xff {
			return Result{}, parseError(p)
		}
		if binary {
			res.Binary = append(res.Binary, p)
			continue
		}
		r := reader{b: p}
		row := make([]string, cols)
		for i := range row {
			if len(r.b) > 0 && r.b[0] == 0xfb {
				r.byte()
				row[i] = "NULL"
				continue
			}
			row[i] = string(r.lenencBytes())
		}
		if r.err != nil {
			return Result{}, fmt.Errorf("row %x: %w", p, r.err)
		}
		res.Rows = append(res.Rows, row)
	}
}

// okStatus returns the status flags of OK packet p (0 when p is short).
func okStatus(p []byte) uint16 {
	r := reader{b: p[1:]}
	r.lenencInt() // affected rows
	r.lenencInt() // last insert id
	return r.uint16()
}

// okResult returns what OK packet p says (zero values past its end
// when p is short).
func okResult(p []byte) Result {
	r := reader{b: p[1:]}
	var res Result
	res.AffectedRows = r.lenencInt()
	res.LastInsertID = r.lenencInt()
	res.Status = r.uint16()
	res.Warnings = r.uint16()
	res.Info = string(r.rest())
	return res
}

// eofWarnings returns the warning count of EOF packet p (0 when p is
// short).
func eofWarnings(p []byte) uint16 {
	r := reader{b: p[1:]}
	return r.uint16()
}

// eofStatus returns the status flags of EOF packet p (0 when p is short).
func eofStatus(p []byte) uint16 {
	r := reader{b: p[1:]}
	r.uint16() // warnings
	return r.uint16()
}

// Prepare prepares sql with COM_STMT_PREPARE and returns the statement id
// and its number of parameters.
func (c *Conn) Prepare(sql string) (id uint32, params int, err error) {
	if err := c.WriteCommand(append([]byte{ComStmtPrepare}, sql...)); err != nil {
		return 0, 0, err
	}
	p, err := c.ReadPacket()
	if err != nil {
		return 0, 0, err
	}
	if len(p) > 0 && p[0] == 0xff {
		return 0, 0, parseError(p)
	}
	if len(p) < 12 || p[0] != 0x00 {
		return 0, 0, fmt.Errorf("prepare response %x", p)
	}
	id = binary.LittleEndian.Uint32(p[1:])
	cols := int(binary.LittleEndian.Uint16(p[5:]))
	params = int(binary.LittleEndian.Uint16(p[7:]))
	for _, n := range []int{params, cols} {
		if n == 0 {
			continue
		}
		for range n {
			if _, err := c.ReadPacket(); err != nil {
				return 0, 0, err
			}
		}
		if err := c.readEOF(); err != nil {
			return 0, 0, err
		}
	}
	return id, params, nil
}

// readEOF reads a packet that must be an EOF packet.
func (c *Conn) readEOF() error {
	p, err := c.ReadPacket()
	if err != nil {
		return err
	}
	if !isEOF(p) {
		return fmt.Errorf("want an EOF packet, got %x", p)
	}
	return nil
}

// isEOF reports whether p is an EOF packet (0xfe and short, so that it is
// not a row starting with an 8-byte length).
func isEOF(p []byte) bool { return len(p) > 0 && p[0] == 0xfe && len(p) < 9 }

// parseError decodes an ERR packet.
func parseError(p []byte) *ServerError {
	r := reader{b: p[1:]}
	e := &ServerError{Code: r.uint16()}
	if len(r.b) > 0 && r.b[0] == '#' {
		r.byte()
		e.State = string(r.bytes(5))
	}
	e.Message = string(r.rest())
	return e
}

// ErrorMessages returns the ERR packets among payloads.
func ErrorMessages(payloads [][]byte) []*ServerError {
	var out []*ServerError
	for _, p := range payloads {
		if len(p) > 2 && p[0] == 0xff {
			out = append(out, parseError(p))
		}
	}
	return out
}

// appendLenencInt appends v as a length-encoded integer.
func appendLenencInt(b []byte, v uint64) []byte {
	switch {
	case v < 251:
		return append(b, byte(v))
	case v < 1<<16:
		return binary.LittleEndian.AppendUint16(append(b, 0xfc), uint16(v))
	case v < 1<<24:
		return append(b, 0xfd, byte(v), byte(v>>8), byte(v>>16))
	default:
		return binary.LittleEndian.AppendUint64(append(b, 0xfe), v)
	}
}

// AppendLenencString appends s as a length-encoded string.
func AppendLenencString(b []byte, s string) []byte {
	return append(appendLenencInt(b, uint64(len(s))), s...)
}

// reader decodes protocol fields from a payload; the first short read sets
// err and every later read returns zero values.
type reader struct {
	b   []byte
	err error
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("want %d bytes, have %d", n, len(r.b))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) byte() byte {
	if b := r.bytes(1); b != nil {
		return b[0]
	}
	return 0
}

func (r *reader) uint16() uint16 {
	if b := r.bytes(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *reader) uint32() uint32 {
	if b := r.bytes(4); b != nil {
		return binary.LittleEndian.Uint32(b)
	}
	return 0
}

func (r *reader) rest() []byte { return r.bytes(len(r.b)) }

func (r *reader) nulString() string {
	for i, c := range r.b {
		if c == 0 {
			s := string(r.b[:i])
			r.b = r.b[i+1:]
			return s
		}
	}
	if r.err == nil {
		r.err = errors.New("string without its NUL")
	}
	return ""
}

func (r *reader) lenencInt() uint64 {
	switch c := r.byte(); c {
	case 0xfc:
		return uint64(r.uint16())
	case 0xfd:
		b := r.bytes(3)
		if b == nil {
			return 0
		}
		return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16
	case 0xfe:
		if b := r.bytes(8); b != nil {
			return binary.LittleEndian.Uint64(b)
		}
		return 0
	default:
		if c >= 0xfb && r.err == nil {
			r.err = fmt.Errorf("bad length-encoded integer prefix %#x", c)
		}
		return uint64(c)
	}
}

func (r *reader) lenencBytes() []byte {
	n := r.lenencInt()
	if n > uint64(len(r.b)) {
		if r.err == nil {
			r.err = errors.New("length-encoded string " + strconv.FormatUint(n, 10) + " bytes past the packet")
		}
		return nil
	}
	return r.bytes(int(n))
}
