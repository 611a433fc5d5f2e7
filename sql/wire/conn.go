package wire

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"

	"github.com/dolthub/vitess/go/mysql"
)

// The packet layout: a 3-byte little-endian payload length and a sequence
// number, then the payload. A payload of maxPayload bytes is continued by
// the next packet.
const (
	headerLen  = 4
	maxPayload = 1<<24 - 1
)

// Payload bytes of the protocol that Conn reads or writes.
const (
	okPacket  = 0x00
	errPacket = 0xff
	// sslRequestLen is the length of the client's SSL request: the first
	// 32 bytes of a handshake response (capabilities, maximum packet size,
	// collation and 23 reserved bytes).
	sslRequestLen = 32
	// readBufferSize is the size of the buffer Conn reads the socket
	// through, vitess's own (mysql.DefaultConnBufferSize).
	readBufferSize = 16 << 10
)

// MySQL's error for a packet longer than max_allowed_packet:
// ER_NET_PACKET_TOO_LARGE; minPacketLimit is the variable's least value.
const (
	codeTooLarge   = 1153
	stateTooLarge  = "08S01"
	msgTooLarge    = "Got a packet bigger than 'max_allowed_packet' bytes"
	minPacketLimit = 1024
)

// MySQL's error for a client that does not switch to TLS when the server
// requires it: ER_SECURE_TRANSPORT_REQUIRED.
const (
	codeInsecure  = 3159
	stateInsecure = "HY000"
	msgInsecure   = "Connections using insecure transport are prohibited while --require_secure_transport=ON."
)

// Config says what the connections of a Listener do.
type Config struct {
	// TLS, when set, is offered to clients: the greeting announces
	// CLIENT_SSL, and a client's SSL request switches its connection to
	// TLS with this configuration. nil offers no TLS.
	TLS *tls.Config
	// RequireSecureTransport refuses a client that does not switch to TLS
	// with MySQL's error 3159, before it logs in.
	RequireSecureTransport bool
	// RewritePrepare, when set, may replace the text of a COM_STMT_PREPARE
	// before vitess parses it: it returns the text vitess gets and true,
	// or false to leave the command as it is.
	RewritePrepare func(query string) (string, bool)
	// MaxPacket, when set, returns max_allowed_packet (0: no limit): a
	// client packet
	// (with the packets that continue it) longer than that is answered
	// with MySQL's error 1153 and the connection closed, before vitess
	// reads it. It is asked only of packets longer than 1 KiB, the
	// variable's least value.
	MaxPacket func() int
	// Statistics, when set, returns the text COM_STATISTICS is answered
	// with (MySQL's "Uptime: …  Threads: …  Questions: …" line); unset,
	// "Uptime: 0".
	Statistics func() string
}

// Listener wraps the connections its inner listener accepts in Conns.
type Listener struct {
	net.Listener
	cfg Config
}

// NewListener returns a Listener over l.
func NewListener(l net.Listener, cfg Config) *Listener {
	return &Listener{Listener: l, cfg: cfg}
}

// Accept implements net.Listener. Nothing is read or written here: the
// handshake runs in the connection's own goroutine, as vitess reads it.
func (l *Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return newConn(c, l.cfg), nil
}

// stage is where a connection is in the protocol.
type stage uint8

const (
	// stageGreeting: vitess has not written the server's greeting yet.
	stageGreeting stage = iota
	// stageFirst: the greeting is out; the client's first packet (its
	// handshake response or SSL request) has not been read.
	stageFirst
	// stageLogin: the client switched to TLS; the login's packets are
	// renumbered until the server's OK or error packet ends it.
	stageLogin
	// stageCommands: the login is over (or needs no renumbering):
	// commands.
	stageCommands
)

// Conn is a client connection as vitess sees it: see the package comment.
// vitess calls Read and Write from the connection's goroutine only; Close
// may come from any goroutine (KILL), as may the net.Conn methods that
// reach the socket itself.
type Conn struct {
	// Conn is the accepted connection, under TLS if the client asked.
	net.Conn
	cfg Config
	// transport is what packets are read from and written to: Conn, or
	// tls over it.
	transport net.Conn
	tls       *tls.Conn
	r         *bufio.Reader
	stage     stage
	// clientCaps are the capability flags of the client's handshake
	// response (vitess keeps two of them).
	clientCaps uint32

	// pending holds bytes of a packet Conn took whole (and may have
	// changed) that vitess has not read yet.
	pending []byte
	// left counts the bytes of the packet being passed through that
	// vitess has not read yet; continued says that packet has the
	// largest payload, so the next one continues it rather than being a
	// command.
	left      int
	continued bool
	// packetLen is the length of the packet being read with the ones
	// before it that it continues (Config.MaxPacket).
	packetLen int
	// atCommand says the next packet from the client that is numbered 0
	// starts a command: the server has written since the client's last
	// packet, or that packet was a command the server does not answer
	// (COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE). Otherwise a packet
	// numbered 0 is one whose numbering wrapped around, in the middle of
	// a long exchange (the file of LOAD DATA LOCAL INFILE).
	atCommand bool
	// written holds the start of a handshake packet vitess is writing
	// (it writes a header and a payload separately).
	written []byte

	// vc is vitess's connection over this one (Attach), for the
	// parameter counts and bound values of its prepared statements.
	vc *mysql.Conn
	// longData lists, per statement Conn decodes the executes of, the
	// parameters whose values came in COM_STMT_SEND_LONG_DATA since its
	// last execute.
	longData map[uint32]map[uint16]bool
	// prepareAnswer says the current command is a COM_STMT_PREPARE
	// whose answer's first packet vitess has not written yet (see
	// answerPrepare).
	prepareAnswer bool
	// original is the text of the current command's COM_STMT_PREPARE
	// when RewritePrepare replaced it (rewritten true).
	original  string
	rewritten bool

	// replySeq numbers the first packet of the answer to the current
	// command (one more than the client's last packet's). shift counts
	// the packets WriteBeforeAnswer wrote before vitess's answer, whose
	// packets are renumbered by as much (renumber: outHdr holds the
	// start of a header split between writes, outLeft the bytes of the
	// packet being written that follow). wrote says vitess has written
	// some of its answer.
	replySeq byte
	shift    byte
	outHdr   []byte
	outLeft  int
	wrote    bool
	// walk follows the answer to a COM_QUERY or COM_STMT_EXECUTE, to
	// write its OK packets with the warning counts and infos AnswerOK
	// queued (okanswer.go).
	walk answerWalk
}

func newConn(c net.Conn, cfg Config) *Conn {
	return &Conn{Conn: c, cfg: cfg, transport: c, r: bufio.NewReaderSize(c, readBufferSize)}
}

// Attach tells c the vitess connection that reads it.
func (c *Conn) Attach(vc *mysql.Conn) { c.vc = vc }

// RewrittenPrepare returns the text the client sent with the current
// command, a COM_STMT_PREPARE, and true when Config.RewritePrepare gave
// vitess another.
func (c *Conn) RewrittenPrepare() (string, bool) { return c.original, c.rewritten }

// Secure reports whether the client switched to TLS.
func (c *Conn) Secure() bool { return c.tls != nil }

// ConnectionState returns the state of the client's TLS connection, the
// zero state (HandshakeComplete false) without one.
func (c *Conn) ConnectionState() tls.ConnectionState {
	if c.tls == nil {
		return tls.ConnectionState{}
	}
	return c.tls.ConnectionState()
}

// NetConn returns the accepted connection under TLS and this package.
func (c *Conn) NetConn() net.Conn { return c.Conn }

// Read implements net.Conn: see the package comment. It never returns
// bytes of two packets at once, so that vitess has answered every command
// before Conn looks at the next.
func (c *Conn) Read(p []byte) (int, error) {
	for {
		if len(c.pending) > 0 {
			n := copy(p, c.pending)
			c.pending = c.pending[n:]
			return n, nil
		}
		if c.left > 0 {
			if len(p) > c.left {
				p = p[:c.left]
			}
			n, err := c.r.Read(p)
			c.left -= n
			return n, err
		}
		if err := c.next(); err != nil {
			return 0, err
		}
	}
}

// next looks at the next packet and makes it the one Read gives, whole
// (pending) or passed through (left); or answers it itself.
func (c *Conn) next() error {
	switch c.stage {
	case stageGreeting, stageFirst:
		return c.first()
	case stageLogin:
		pkt, err := c.readPacket()
		if err != nil {
			return err
		}
		pkt[3]-- // the client counted its SSL request, vitess did not see it
		c.pending = pkt
		return nil
	}
	return c.command()
}

// first reads the client's first packet. An SSL request switches the
// connection to TLS; the handshake response that follows is what vitess
// reads first.
func (c *Conn) first() error {
	pkt, err := c.readPacket()
	if err != nil {
		return err
	}
	payload := pkt[headerLen:]
	if c.cfg.TLS != nil && len(payload) >= sslRequestLen && binary.LittleEndian.Uint32(payload)&mysql.CapabilityClientSSL != 0 {
		return c.startTLS()
	}
	if handshakeUnreadable(payload) {
		return c.refuseHandshake(pkt[3])
	}
	c.noteClientCaps(payload)
	if c.cfg.RequireSecureTransport {
		_ = c.writeError(pkt[3]+1, codeInsecure, stateInsecure, msgInsecure)
		return fmt.Errorf("client %s did not switch to TLS, which the server requires", c.RemoteAddr())
	}
	c.stage = stageCommands
	c.pending = pkt
	return nil
}

// startTLS runs the server side of the TLS handshake, then reads the
// client's handshake response through it.
func (c *Conn) startTLS() error {
	// The client's first TLS bytes may already be in c.r.
	tc := tls.Server(&bufferedConn{Conn: c.Conn, r: c.r}, c.cfg.TLS)
	if err := tc.Handshake(); err != nil {
		return fmt.Errorf("TLS handshake with %s: %w", c.RemoteAddr(), err)
	}
	c.tls, c.transport = tc, tc
	c.r = bufio.NewReaderSize(tc, readBufferSize)
	c.stage = stageLogin
	pkt, err := c.readPacket()
	if err != nil {
		return err
	}
	if handshakeUnreadable(pkt[headerLen:]) {
		return c.refuseHandshake(pkt[3])
	}
	c.noteClientCaps(pkt[headerLen:])
	pkt[3]--
	c.pending = pkt
	return nil
}

// bufferedConn is a net.Conn whose reads start with what r has buffered.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

// Read implements net.Conn.
func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

// command looks at the next packet of the command phase. A packet that
// starts a command (see Conn.atCommand; not continuing a longer one) is
// taken whole when it is a COM_STMT_PREPARE that RewritePrepare changes
// or a COM_STMT_EXECUTE that vitess would read wrongly; everything else
// passes through.
func (c *Conn) command() error {
	hdr, err := c.r.Peek(headerLen)
	if err != nil {
		return err
	}
	n := payloadLen(hdr)
	if !c.continued {
		c.packetLen = 0
	}
	if c.packetLen += n; c.packetLen > minPacketLimit && c.cfg.MaxPacket != nil {
		if limit := c.cfg.MaxPacket(); limit > 0 && c.packetLen > limit {
			return c.refuseLarge(hdr[3], n)
		}
	}
	starts := c.atCommand && hdr[3] == 0 && !c.continued
	c.atCommand = false
	c.replySeq = hdr[3] + 1
	if starts {
		c.shift, c.outHdr, c.outLeft, c.wrote = 0, c.outHdr[:0], 0, false
		c.walk.startAnswer(false)
	}
	if starts && n == 0 {
		return c.answerEmpty()
	}
	if starts {
		c.original, c.rewritten = "", false
		head, err := c.r.Peek(headerLen + min(n, 7))
		if err != nil {
			return err
		}
		cmd := head[headerLen:]
		c.prepareAnswer = cmd[0] == mysql.ComPrepare
		c.walk.startAnswer(cmd[0] == mysql.ComQuery || cmd[0] == mysql.ComStmtExecute)
		switch cmd[0] {
		case mysql.ComPrepare:
			if c.cfg.RewritePrepare != nil && n < maxPayload {
				return c.prepare()
			}
		case mysql.ComStmtExecute:
			if len(cmd) >= 5 {
				if p := c.prepared(binary.LittleEndian.Uint32(cmd[1:])); p != nil && p.ParamsCount > 0 {
					return c.execute(p, n)
				}
			}
		case mysql.ComStmtSendLongData:
			if len(cmd) >= 7 {
				c.noteLongData(binary.LittleEndian.Uint32(cmd[1:]), binary.LittleEndian.Uint16(cmd[5:]))
			}
			c.atCommand = n < maxPayload
		case mysql.ComStmtClose:
			if len(cmd) >= 5 {
				delete(c.longData, binary.LittleEndian.Uint32(cmd[1:]))
			}
			c.atCommand = n < maxPayload
		case mysql.ComStmtReset:
			if len(cmd) < 5 || c.vc != nil && c.prepared(binary.LittleEndian.Uint32(cmd[1:])) == nil {
				return c.refuseReset(n, len(cmd) < 5)
			}
			delete(c.longData, binary.LittleEndian.Uint32(cmd[1:]))
		case mysql.ComBinlogDumpGTID, mysql.ComRegisterReplica:
			if n < maxPayload {
				return c.checkReplication()
			}
		case comStatistics, comRefresh, comDebug:
			if n < maxPayload {
				return c.adminCommand(cmd[0])
			}
		}
	}
	c.continued = n == maxPayload
	c.left = headerLen + n
	return nil
}

// refuseLarge answers a packet numbered seq, of n bytes, that makes the
// client's packet longer than max_allowed_packet: as MySQL, with error
// 1153, and the connection is closed. The packet is read first (that
// much, not the packets that would continue it), so that the client
// finds the answer rather than a reset connection.
func (c *Conn) refuseLarge(seq byte, n int) error {
	if _, err := c.r.Discard(headerLen + n); err == nil {
		_ = c.writeError(seq+1, codeTooLarge, stateTooLarge, msgTooLarge)
	}
	return fmt.Errorf("client %s sent a packet longer than max_allowed_packet", c.RemoteAddr())
}

// prepare reads a COM_STMT_PREPARE (of one packet) and gives vitess the
// text RewritePrepare makes of it.
func (c *Conn) prepare() error {
	pkt, err := c.readPacket()
	if err != nil {
		return err
	}
	query := string(pkt[headerLen+1:])
	if q, ok := c.cfg.RewritePrepare(query); ok && 1+len(q) < maxPayload {
		c.original, c.rewritten = query, true
		pkt = appendPacket(nil, 0, append([]byte{mysql.ComPrepare}, q...))
	}
	c.pending = pkt
	return nil
}

// Write implements net.Conn. The greeting gets CLIENT_SSL when TLS is
// offered; the login's packets after an SSL request are renumbered.
func (c *Conn) Write(p []byte) (int, error) {
	if c.stage != stageGreeting && c.stage != stageLogin {
		c.atCommand, c.wrote = true, true
		if c.prepareAnswer {
			return c.answerPrepare(p)
		}
		if c.walk.on {
			return c.answerOK(p)
		}
		if c.shift != 0 {
			if _, err := c.transport.Write(c.renumber(p)); err != nil {
				return 0, err
			}
			return len(p), nil
		}
		return c.transport.Write(p)
	}
	c.written = append(c.written, p...)
	for len(c.written) >= headerLen && (c.stage == stageGreeting || c.stage == stageLogin) {
		end := headerLen + payloadLen(c.written)
		if len(c.written) < end {
			return len(p), nil
		}
		pkt := c.written[:end]
		switch c.stage {
		case stageGreeting:
			if c.cfg.TLS != nil {
				announceSSL(pkt[headerLen:])
			}
			c.stage = stageFirst
		case stageLogin:
			pkt[3]++
			if len(pkt) > headerLen && (pkt[headerLen] == okPacket || pkt[headerLen] == errPacket) {
				c.stage, c.atCommand = stageCommands, true
			}
		}
		if _, err := c.transport.Write(pkt); err != nil {
			return 0, err
		}
		c.written = c.written[end:]
	}
	if len(c.written) > 0 && c.stage != stageGreeting && c.stage != stageLogin {
		// Bytes after the packet that ended the handshake (vitess
		// writes none).
		rest := c.written
		c.written = nil
		if _, err := c.transport.Write(rest); err != nil {
			return 0, err
		}
	}
	if len(c.written) == 0 {
		c.written = nil
	}
	return len(p), nil
}

// answerPrepare writes p, bytes of vitess's answer to a COM_STMT_PREPARE,
// once the answer's first packet is whole: vitess parses the statement
// before any handler runs and answers one it cannot parse with 1105
// (HY000) and "unknown error: Code: INVALID_ARGUMENT" before its parser's
// message, where MySQL answers 1064 (42000, ER_PARSE_ERROR), as percdb's
// handler does for a query: that packet is replaced by MySQL's, with the
// parser's message. Everything after it passes through.
func (c *Conn) answerPrepare(p []byte) (int, error) {
	c.written = append(c.written, p...)
	if len(c.written) < headerLen || len(c.written) < headerLen+payloadLen(c.written) {
		return len(p), nil
	}
	c.prepareAnswer = false
	out := c.written
	c.written = nil
	end := headerLen + payloadLen(out)
	if msg, ok := parseErrorMessage(out[headerLen:end]); ok {
		out = append(errorPacket(out[3], codeParseError, stateParseError, msg), out[end:]...)
	}
	if _, err := c.transport.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// vitessParseError starts the message of vitess's parse errors.
const vitessParseError = "syntax error at position "

// MySQL's code and state of a statement that does not parse.
const (
	codeParseError  = 1064
	stateParseError = "42000"
)

// parseErrorMessage returns the parser's message when payload is the
// error packet (1105) vitess answers a statement it cannot parse with.
func parseErrorMessage(payload []byte) (string, bool) {
	const at = 1 + 2 + 1 + 5 // marker, code, '#', state: the message
	if len(payload) < at || payload[0] != errPacket || binary.LittleEndian.Uint16(payload[1:]) != mysql.ERUnknownError || payload[3] != '#' {
		return "", false
	}
	i := bytes.Index(payload[at:], []byte(vitessParseError))
	if i < 0 {
		return "", false
	}
	return string(bytes.TrimSpace(payload[at+i:])), true
}

// Close implements net.Conn: it closes the socket (without TLS's closing
// alert, which could wait on a client that does not read).
func (c *Conn) Close() error { return c.Conn.Close() }

// announceSSL sets CLIENT_SSL in the capabilities of greeting, a
// HandshakeV10 payload: protocol version, server version (NUL-ended),
// connection id (4), auth data (8), filler (1), then the capabilities'
// lower two bytes.
func announceSSL(greeting []byte) {
	for i := 1; i < len(greeting); i++ {
		if greeting[i] == 0 {
			at := i + 1 + 4 + 8 + 1
			if at+2 <= len(greeting) {
				caps := binary.LittleEndian.Uint16(greeting[at:]) | uint16(mysql.CapabilityClientSSL)
				binary.LittleEndian.PutUint16(greeting[at:], caps)
			}
			return
		}
	}
}

// payloadLen is the payload length a packet header gives.
func payloadLen(hdr []byte) int {
	return int(hdr[0]) | int(hdr[1])<<8 | int(hdr[2])<<16
}

// appendPacket appends payload as one packet numbered seq to b. The
// payload must be shorter than maxPayload.
func appendPacket(b []byte, seq byte, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n), byte(n>>8), byte(n>>16), seq)
	return append(b, payload...)
}

// readPacket reads one packet, header and payload.
func (c *Conn) readPacket() ([]byte, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(c.r, hdr[:]); err != nil {
		return nil, err
	}
	pkt := make([]byte, headerLen+payloadLen(hdr[:]))
	copy(pkt, hdr[:])
	if _, err := io.ReadFull(c.r, pkt[headerLen:]); err != nil {
		return nil, fmt.Errorf("read packet of %d bytes: %w", len(pkt)-headerLen, err)
	}
	return pkt, nil
}

// readCommand reads a command's packets up to the first shorter than
// maxPayload: it returns them as on the wire, the command's payload, and
// the last packet's sequence number.
func (c *Conn) readCommand() (packets, payload []byte, seq byte, err error) {
	for {
		pkt, err := c.readPacket()
		if err != nil {
			return nil, nil, 0, err
		}
		packets = append(packets, pkt...)
		payload = append(payload, pkt[headerLen:]...)
		if len(pkt)-headerLen < maxPayload {
			return packets, payload, pkt[3], nil
		}
	}
}

// writeError writes an error packet numbered seq, as the answer to the
// client's last packet.
func (c *Conn) writeError(seq byte, code uint16, state, msg string) error {
	_, err := c.transport.Write(errorPacket(seq, code, state, msg))
	return err
}

// errorPacket returns an error packet numbered seq: its marker, code,
// '#', SQLSTATE and message.
func errorPacket(seq byte, code uint16, state, msg string) []byte {
	payload := make([]byte, 0, 9+len(msg))
	payload = append(payload, errPacket, byte(code), byte(code>>8), '#')
	payload = append(payload, state...)
	payload = append(payload, msg...)
	return appendPacket(nil, seq, payload)
}
