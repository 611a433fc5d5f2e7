package wire

import (
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/percdb/percdb/sql/autocerts"
)

// testTLS returns a server configuration with the certificate package
// autocerts makes.
func testTLS(t *testing.T) *tls.Config {
	t.Helper()
	certFile, keyFile, err := autocerts.Ensure(t.TempDir(), "wire test")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
}

// packet is one packet as read by readTestPacket.
type packet struct {
	seq     byte
	payload []byte
}

func readTestPacket(r io.Reader) (packet, error) {
	var hdr [headerLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return packet{}, err
	}
	p := make([]byte, payloadLen(hdr[:]))
	_, err := io.ReadFull(r, p)
	return packet{seq: hdr[3], payload: p}, err
}

func writeTestPacket(w io.Writer, seq byte, payload []byte) error {
	_, err := w.Write(appendPacket(nil, seq, payload))
	return err
}

// greeting is a HandshakeV10 payload with CLIENT_PROTOCOL_41 only.
func greeting() []byte {
	g := append([]byte{10}, "8.0.36\x00"...)
	g = append(g, 1, 0, 0, 0)                      // connection id
	g = append(g, bytes.Repeat([]byte{'s'}, 8)...) // auth data
	g = append(g, 0)                               // filler
	g = binary.LittleEndian.AppendUint16(g, uint16(mysql.CapabilityClientProtocol41))
	return append(g, 0x21, 2, 0, 0, 0, 21, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

// fakeVitess plays vitess's side of a login over c: the greeting (header
// and payload written apart, as vitess does), the handshake response, an
// extra exchange (caching_sha2_password's full authentication) and the OK
// packet, then one command and its answer. It reports the sequence
// numbers it read, which must be vitess's.
func fakeVitess(c net.Conn, done chan<- error) {
	done <- func() error {
		g := greeting()
		if _, err := c.Write([]byte{byte(len(g)), 0, 0, 0}); err != nil {
			return err
		}
		if _, err := c.Write(g); err != nil {
			return err
		}
		for i, want := range []packet{{1, []byte("response")}, {3, []byte("password\x00")}} {
			p, err := readTestPacket(c)
			if err != nil {
				return err
			}
			if p.seq != want.seq || !bytes.Equal(p.payload, want.payload) {
				return fmt.Errorf("login packet %d: %d %q, want %d %q", i, p.seq, p.payload, want.seq, want.payload)
			}
			answer := []byte{0x01, 0x04} // more data: full authentication
			if i == 1 {
				answer = []byte{okPacket, 0, 0, 2, 0, 0, 0}
			}
			if err := writeTestPacket(c, p.seq+1, answer); err != nil {
				return err
			}
		}
		p, err := readTestPacket(c)
		if err != nil {
			return err
		}
		if p.seq != 0 || string(p.payload) != "\x03SELECT 1" {
			return fmt.Errorf("command: %d %q", p.seq, p.payload)
		}
		return writeTestPacket(c, 1, []byte{okPacket, 0, 0, 2, 0, 0, 0})
	}()
}

// TestTLSLogin logs in over TLS: the greeting announces CLIENT_SSL, the
// SSL request starts TLS, and the login's packets are numbered as the
// client counts them on its side and as vitess counts them on the other.
func TestTLSLogin(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	wc := newConn(server, Config{TLS: testTLS(t)})
	defer wc.Close()
	done := make(chan error, 1)
	go fakeVitess(wc, done)

	g, err := readTestPacket(client)
	if err != nil {
		t.Fatal(err)
	}
	if caps := binary.LittleEndian.Uint16(g.payload[len("\x0a8.0.36\x00")+4+8+1:]); caps&uint16(mysql.CapabilityClientSSL) == 0 {
		t.Fatalf("greeting capabilities %#x without CLIENT_SSL", caps)
	}
	req := make([]byte, sslRequestLen)
	binary.LittleEndian.PutUint32(req, mysql.CapabilityClientProtocol41|mysql.CapabilityClientSSL)
	if err := writeTestPacket(client, 1, req); err != nil {
		t.Fatal(err)
	}
	tc := tls.Client(client, &tls.Config{InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	if err := writeTestPacket(tc, 2, []byte("response")); err != nil {
		t.Fatal(err)
	}
	for i, next := range []struct {
		seq  byte
		send []byte
	}{{3, []byte("password\x00")}, {5, nil}} {
		p, err := readTestPacket(tc)
		if err != nil {
			t.Fatal(err)
		}
		if p.seq != next.seq {
			t.Fatalf("login answer %d numbered %d, want %d", i, p.seq, next.seq)
		}
		if next.send != nil {
			if err := writeTestPacket(tc, p.seq+1, next.send); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := writeTestPacket(tc, 0, []byte("\x03SELECT 1")); err != nil {
		t.Fatal(err)
	}
	if p, err := readTestPacket(tc); err != nil || p.seq != 1 {
		t.Fatalf("answer to the command: %v %v, want sequence 1", p, err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !wc.Secure() || !wc.ConnectionState().HandshakeComplete {
		t.Error("the connection does not report TLS")
	}
}

// TestRequireSecureTransport refuses a client that answers the greeting
// without switching to TLS, with error 3159 numbered after its packet.
func TestRequireSecureTransport(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	wc := newConn(server, Config{TLS: testTLS(t), RequireSecureTransport: true})
	defer wc.Close()
	done := make(chan error, 1)
	go func() {
		g := greeting()
		if _, err := wc.Write(appendPacket(nil, 0, g)); err != nil {
			done <- err
			return
		}
		_, err := readTestPacket(wc)
		done <- err
	}()
	if _, err := readTestPacket(client); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, sslRequestLen+5)
	binary.LittleEndian.PutUint32(resp, mysql.CapabilityClientProtocol41)
	if err := writeTestPacket(client, 1, resp); err != nil {
		t.Fatal(err)
	}
	p, err := readTestPacket(client)
	if err != nil {
		t.Fatal(err)
	}
	if p.seq != 2 || len(p.payload) < 3 || p.payload[0] != errPacket || binary.LittleEndian.Uint16(p.payload[1:]) != codeInsecure {
		t.Fatalf("answer %d %q, want error 3159 numbered 2", p.seq, p.payload)
	}
	if err := <-done; err == nil {
		t.Fatal("vitess read the plain client's handshake response")
	}
}

// executePayload encodes a COM_STMT_EXECUTE of statement 1 with params
// (nil: NULL), each a type, its flags and its value's bytes.
func executePayload(params []testParam) []byte {
	b := []byte{mysql.ComStmtExecute, 1, 0, 0, 0, 0, 1, 0, 0, 0}
	nulls := make([]byte, (len(params)+7)/8)
	var types, values []byte
	for i, p := range params {
		types = append(types, p.typ, p.flags)
		if p.value == nil {
			nulls[i/8] |= 1 << (i % 8)
		}
		values = append(values, p.value...)
	}
	b = append(b, nulls...)
	b = append(b, 1)
	b = append(b, types...)
	return append(b, values...)
}

type testParam struct {
	typ, flags byte
	value      []byte
}

// manyParams returns 65,531 parameters: a few of each kind of value
// first, NULLs past the 65,528th, TINYs elsewhere.
func manyParams() ([]testParam, []sqltypes.Value) {
	params := []testParam{
		{0x08, 0, binary.LittleEndian.AppendUint64(nil, uint64(1<<40+3))},
		{0x08, 0x80, binary.LittleEndian.AppendUint64(nil, 1<<63+1)},
		{0xfd, 0, append([]byte{5}, "hello"...)},
		{0x0c, 0, []byte{11, 0xe4, 0x07, 2, 29, 23, 59, 58, 5, 0, 0, 0}},
		{0x0b, 0, []byte{12, 1, 2, 0, 0, 0, 3, 4, 5, 6, 0, 0, 0}},
		{0x0a, 0, []byte{0}},
		{0x05, 0, binary.LittleEndian.AppendUint64(nil, 0x3ff8000000000000)},
	}
	want := []sqltypes.Value{
		sqltypes.NewInt64(1<<40 + 3),
		sqltypes.NewUint64(1<<63 + 1),
		sqltypes.MakeTrusted(sqltypes.VarBinary, []byte("hello")),
		sqltypes.NewVarChar("2020-02-29 23:59:58.000005"),
		sqltypes.NewVarChar("-51:04:05.000006"),
		sqltypes.NewVarChar("0000-00-00"),
		sqltypes.NewFloat64(1.5),
	}
	for len(params) < maxVitessParams+3 {
		params = append(params, testParam{0x01, 0, []byte{0xff}})
		want = append(want, sqltypes.NewInt64(-1))
	}
	params[maxVitessParams+1] = testParam{0x01, 0, nil}
	want[maxVitessParams+1] = sqltypes.NULL
	return params, want
}

// TestBind decodes an execute of more parameters than vitess reads
// right, as vitess would decode each value, but for the microseconds
// (vitess: 5 µs as ".5") and the zero date (vitess: " ").
func TestBind(t *testing.T) {
	params, want := manyParams()
	prepare := &mysql.PrepareData{StatementID: 1, ParamsCount: uint16(len(params)), ParamsType: make([]int32, len(params))}
	payload := executePayload(params)
	if err := bind(prepare, payload[:len(payload)-1], nil); err == nil {
		t.Fatal("a truncated execute decoded")
	}
	if prepare.BindVars != nil {
		t.Fatal("a failed decode changed the statement's values")
	}
	if err := bind(prepare, payload, nil); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		v, err := sqltypes.BindVariableToValue(prepare.BindVars["v"+strconv.Itoa(i+1)])
		if err != nil {
			t.Fatal(err)
		}
		if v.Type() != w.Type() || v.ToString() != w.ToString() {
			t.Fatalf("parameter %d: %v, want %v", i+1, v, w)
		}
	}
}

// TestExecuteThroughConn sends such an execute through a Conn: vitess
// gets the values as bound variables and a packet it reads without
// touching them; a long-data parameter keeps its value.
func TestExecuteThroughConn(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	wc := newConn(server, Config{})
	wc.stage, wc.atCommand = stageCommands, true
	params, _ := manyParams()
	prepare := &mysql.PrepareData{StatementID: 1, ParamsCount: uint16(len(params)), ParamsType: make([]int32, len(params))}
	vc := &mysql.Conn{PrepareData: map[uint32]*mysql.PrepareData{1: prepare}}
	wc.Attach(vc)

	params[2].value = nil
	params[2].flags = 0
	payload := executePayload(params)
	got := make(chan packet, 2)
	go func() {
		for range 2 {
			p, err := readTestPacket(wc)
			if err != nil {
				close(got)
				return
			}
			got <- p
		}
	}()
	longData := append([]byte{mysql.ComStmtSendLongData, 1, 0, 0, 0, 2, 0}, "long"...)
	if err := writeTestPacket(client, 0, longData); err != nil {
		t.Fatal(err)
	}
	if p := <-got; p.payload[0] != mysql.ComStmtSendLongData {
		t.Fatalf("long data reached vitess as %q", p.payload)
	}
	prepare.BindVars = map[string]*querypb.BindVariable{"v3": sqltypes.BytesBindVariable([]byte("long"))}
	// A NULL bit would make vitess read the value as NULL: the
	// long-data parameter is sent neither NULL nor with a value.
	payload[executeBitmapAt] &^= 1 << 2
	if err := writeTestPacket(client, 0, payload); err != nil {
		t.Fatal(err)
	}
	p := <-got
	if len(p.payload) != len(payload) || p.payload[executeBitmapAt] != 0 {
		t.Fatalf("vitess got %d bytes with %#x where it reads the new-parameters flag", len(p.payload), p.payload[executeBitmapAt])
	}
	if v := prepare.BindVars["v3"]; v == nil || string(v.Value) != "long" {
		t.Errorf("long-data parameter: %v", v)
	}
	if v := prepare.BindVars["v1"]; v == nil || string(v.Value) != "1099511627779" {
		t.Errorf("parameter 1: %v", v)
	}
	if len(prepare.BindVars) != len(params) {
		t.Errorf("%d parameters bound, want %d", len(prepare.BindVars), len(params))
	}
}

// TestMaxPacket refuses a command longer than max_allowed_packet with
// error 1153, before vitess reads any of it, and lets a shorter one by.
func TestMaxPacket(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	wc := newConn(server, Config{MaxPacket: func() int { return 2048 }})
	wc.stage, wc.atCommand = stageCommands, true
	got := make(chan error, 1)
	go func() {
		p, err := readTestPacket(wc)
		if err == nil && len(p.payload) != 2048 {
			err = fmt.Errorf("vitess read %d bytes, want the 2048 of the first command", len(p.payload))
		}
		if err == nil {
			_, err = readTestPacket(wc)
		}
		got <- err
	}()
	for _, n := range []int{2048, 2049} {
		if err := writeTestPacket(client, 0, append([]byte{mysql.ComQuery}, bytes.Repeat([]byte{'x'}, n-1)...)); err != nil {
			t.Fatal(err)
		}
	}
	p, err := readTestPacket(client)
	if err != nil {
		t.Fatal(err)
	}
	if p.seq != 1 || p.payload[0] != errPacket || binary.LittleEndian.Uint16(p.payload[1:]) != codeTooLarge {
		t.Fatalf("answer %d %q, want error 1153 numbered 1", p.seq, p.payload)
	}
	if err := <-got; err == nil {
		t.Fatal("vitess read the command longer than max_allowed_packet")
	}
}
