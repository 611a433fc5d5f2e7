package wirefuzz

import (
	"encoding/binary"
	"fmt"
	"testing"
	"time"
)

// FuzzHandshake sends the input instead of the client's handshake
// response: as raw bytes on the socket (raw) or as one packet with the
// sequence id a handshake response has (1).
func FuzzHandshake(f *testing.F) {
	tg := startTarget(f)
	f.Fuzz(func(t *testing.T, raw bool, data []byte) {
		tg.run(t, fuzzInput{target: "FuzzHandshake", args: []any{raw, data}}, false)
	})
}

// FuzzCommand logs in, then sends the input as the next command: as raw
// bytes (raw: any framing, sequence ids, truncation or pipelined
// packets) or as one packet starting a command (sequence id 0).
func FuzzCommand(f *testing.F) {
	tg := startTarget(f)
	f.Fuzz(func(t *testing.T, raw bool, data []byte) {
		tg.run(t, fuzzInput{target: "FuzzCommand", args: []any{raw, data}}, false)
	})
}

// FuzzStmt logs in to fuzzDB, prepares stmtQuery, and sends a command
// about the prepared statement: cmd, the statement id, then body. When
// then is not empty, a COM_STMT_EXECUTE of the same statement with body
// then follows, so that COM_STMT_SEND_LONG_DATA or COM_STMT_RESET can be
// followed by an execution that uses what they left.
func FuzzStmt(f *testing.F) {
	tg := startTarget(f)
	f.Fuzz(func(t *testing.T, cmd byte, body, then []byte) {
		tg.run(t, fuzzInput{target: "FuzzStmt", args: []any{cmd, body, then}}, false)
	})
}

// stmtQuery is the statement FuzzStmt prepares: four parameters of
// different uses (arithmetic, string function, key lookup, index lookup)
// over the table startTarget creates.
const stmtQuery = "SELECT v, n + ?, CONCAT(?, 'x') FROM t WHERE id = ? OR v = ?"

// stmtParams is the number of parameters of stmtQuery.
const stmtParams = 4

// fuzzInput is one input of a fuzz target: the target's name and the
// arguments of its fuzz function.
type fuzzInput struct {
	target string
	args   []any
}

// String shows the input in the form of its fuzz function's arguments.
func (in fuzzInput) String() string {
	s := in.target + "("
	for i, a := range in.args {
		if i > 0 {
			s += ", "
		}
		switch a := a.(type) {
		case []byte:
			s += fmt.Sprintf("%q", head(a))
		case byte:
			s += fmt.Sprintf("%#x", a)
		default:
			s += fmt.Sprint(a)
		}
	}
	return s + ")"
}

// run sends one input to the server as its target does and checks the
// property (see check; strict refuses known findings too).
func (tg *target) run(t *testing.T, in fuzzInput, strict bool) {
	t.Helper()
	what := in.String()
	before := tg.panics.count()
	var c *Conn
	switch in.target {
	case "FuzzHandshake":
		raw, data := in.args[0].(bool), in.args[1].([]byte)
		var err error
		c, _, err = Dial(tg.addr, time.Now().Add(ioTimeout))
		if err != nil {
			t.Fatalf("%s: connect: %v", what, err)
		}
		// A write can fail when the server has already closed on a bad
		// input; that is one of the acceptable outcomes.
		if raw {
			_ = c.WriteRaw(data)
		} else {
			c.seq = 1
			_ = c.WritePacket(data)
		}
	case "FuzzCommand":
		raw, data := in.args[0].(bool), in.args[1].([]byte)
		c = tg.login(t, "")
		if raw {
			_ = c.WriteRaw(data)
		} else {
			_ = c.WriteCommand(data)
		}
	case "FuzzStmt":
		cmd, body, then := in.args[0].(byte), in.args[1].([]byte), in.args[2].([]byte)
		c = tg.login(t, fuzzDB)
		id, n, err := c.Prepare(stmtQuery)
		if err != nil || n != stmtParams {
			c.Close()
			t.Fatalf("%s: prepare %s: %d parameters, %v", what, stmtQuery, n, err)
		}
		_ = c.WriteCommand(stmtCommand(cmd, id, body))
		if len(then) > 0 {
			_ = c.WriteCommand(stmtCommand(ComStmtExecute, id, then))
		}
	default:
		t.Fatalf("unknown fuzz target %q", in.target)
	}
	tg.check(t, finish(t, c, what), before, what, strict)
}

// stmtCommand is the payload of a statement command: cmd, the statement
// id, then body.
func stmtCommand(cmd byte, id uint32, body []byte) []byte {
	p := binary.LittleEndian.AppendUint32([]byte{cmd}, id)
	return append(p, body...)
}
