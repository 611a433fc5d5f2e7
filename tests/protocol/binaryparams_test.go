package protocol

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/percdb/percdb/tests/isolation/testserver"
	"github.com/percdb/percdb/tests/wirefuzz"
)

// Binary protocol parameter types (MYSQL_TYPE_*).
const (
	typeDate     = 0x0a
	typeTime     = 0x0b
	typeDatetime = 0x0c
)

// datetimeParam is a DATETIME parameter as libmysqlclient and
// Connector/J send one: length 11 with microseconds, 7 without.
func datetimeParam(year uint16, month, day, hour, minute, second byte, micros uint32) wirefuzz.Param {
	v := []byte{7}
	v = binary.LittleEndian.AppendUint16(v, year)
	v = append(v, month, day, hour, minute, second)
	if micros != 0 {
		v[0] = 11
		v = binary.LittleEndian.AppendUint32(v, micros)
	}
	return wirefuzz.Param{Type: typeDatetime, Value: v}
}

// timeParam is a TIME parameter: length 12 with microseconds, 8 without.
func timeParam(negative bool, days uint32, hour, minute, second byte, micros uint32) wirefuzz.Param {
	v := []byte{8, 0}
	if negative {
		v[1] = 1
	}
	v = binary.LittleEndian.AppendUint32(v, days)
	v = append(v, hour, minute, second)
	if micros != 0 {
		v[0] = 12
		v = binary.LittleEndian.AppendUint32(v, micros)
	}
	return wirefuzz.Param{Type: typeTime, Value: v}
}

// TestBinaryTemporalParams binds DATETIME, TIME and DATE parameters in
// the binary protocol, as libmysqlclient, Connector/J and PyMySQL's C
// sibling send them: the microseconds must be read as microseconds (vitess
// read 5 µs as ".5", half a second, and 50 µs as ".50"), a zero DATE
// (length 0) as 0000-00-00 (vitess: " "), also when an execute sends no
// types and the statement's last ones apply.
func TestBinaryTemporalParams(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		run(t, c, []step{
			{sql: "SET SESSION sql_mode = ''", want: []uint16{ac}},
			{sql: "CREATE TABLE bt (id INT PRIMARY KEY, d DATE, dt DATETIME(6), tm TIME(6))", want: []uint16{ac}},
		})
		id, _, err := c.Prepare("INSERT INTO bt VALUES (?, ?, ?, ?)")
		if err != nil {
			t.Fatal(err)
		}
		exec := func(args ...any) {
			t.Helper()
			if _, err := c.Execute(id, args...); err != nil {
				t.Fatalf("execute: %v", err)
			}
		}
		exec(int64(1), wirefuzz.Param{Type: typeDate, Value: []byte{4, 0xe8, 0x07, 2, 29}},
			datetimeParam(2024, 2, 29, 23, 59, 58, 5), timeParam(false, 0, 1, 2, 3, 50))
		exec(int64(2), wirefuzz.Param{Type: typeDate, Value: []byte{0}},
			datetimeParam(1999, 12, 31, 0, 0, 0, 123456), timeParam(true, 2, 3, 4, 5, 600000))
		// The same types again, not sent: the last execute's apply.
		body, err := wirefuzz.ExecuteBody(id, int64(4), wirefuzz.Param{Type: typeDate, Value: []byte{4, 0xd0, 0x07, 1, 2}},
			datetimeParam(2020, 1, 2, 3, 4, 5, 7), timeParam(false, 1, 0, 0, 0, 99))
		if err != nil {
			t.Fatal(err)
		}
		const flagAt = 10 + 1 // the command, id, cursor, iterations; a one-byte NULL bitmap
		body = append(append(body[:flagAt:flagAt], 0), body[flagAt+1+2*4:]...)
		if err := c.WriteCommand(body); err != nil {
			t.Fatal(err)
		}
		if p, err := c.ReadPacket(); err != nil || len(p) == 0 || p[0] != 0 {
			t.Fatalf("execute without types: %x, %v", p, err)
		}
		exec(int64(3), nil, datetimeParam(2000, 1, 1, 1, 2, 3, 0), timeParam(false, 0, 0, 0, 0, 1))
		run(t, c, []step{{
			sql:  "SELECT id, d, dt, tm FROM bt ORDER BY id",
			want: []uint16{ac},
			rows: "[[1 2024-02-29 2024-02-29 23:59:58.000005 01:02:03.000050] " +
				"[2 0000-00-00 1999-12-31 00:00:00.123456 -51:04:05.600000] " +
				"[3 NULL 2000-01-01 01:02:03.000000 00:00:00.000001] " +
				"[4 2000-01-02 2020-01-02 03:04:05.000007 24:00:00.000099]]",
		}})
		// A parameter read as a value of its own, not through a column.
		sel, _, err := c.Prepare("SELECT CAST(? AS CHAR), CAST(? AS CHAR)")
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Execute(sel, datetimeParam(2020, 1, 2, 3, 4, 5, 5), timeParam(false, 0, 1, 2, 3, 10))
		if err != nil {
			t.Fatal(err)
		}
		if got := binaryStrings(res); got != "2020-01-02 03:04:05.000005|01:02:03.000010" {
			t.Errorf("SELECT of DATETIME and TIME parameters: %s", got)
		}
	})
}

// binaryStrings returns the string columns of the first binary row of
// res, separated by |.
func binaryStrings(res []wirefuzz.Result) string {
	if len(res) == 0 || len(res[0].Binary) == 0 {
		return "no row"
	}
	row := res[0].Binary[0]
	cols := len(res[0].Columns)
	pos := 1 + (cols+7+2)/8 // header, NULL bitmap
	out := ""
	for i := range cols {
		if i > 0 {
			out += "|"
		}
		if row[1+(i+2)/8]&(1<<((i+2)%8)) != 0 {
			out += "NULL"
			continue
		}
		n := int(row[pos])
		out += string(row[pos+1 : pos+1+n])
		pos += 1 + n
	}
	return out
}

// TestMalformedCommands sends commands that vitess read past their ends
// or on with a missing statement, panicking and dropping the connection
// with no answer (the wire fuzzer's findings): each gets MySQL's error and
// the connection goes on.
func TestMalformedCommands(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		id, _, err := c.Prepare("SELECT ?, ?")
		if err != nil {
			t.Fatal(err)
		}
		le32 := func(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }
		huge := append([]byte{0xfe}, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)
		// MariaDB 10.11 reads a short COM_STMT_RESET's id past its end
		// and takes the string longer than the packet (answering out of
		// step); MySQL 8 refuses both as malformed (1835), as percdb.
		cases := []struct {
			name      string
			payload   []byte
			code      uint16
			mysqlOnly bool
		}{
			{"empty packet", []byte{}, 1047, false},
			{"COM_STMT_RESET of an unknown statement", append([]byte{wirefuzz.ComStmtReset}, le32(12345)...), 1243, false},
			{"short COM_STMT_RESET", []byte{wirefuzz.ComStmtReset, 1}, 1835, true},
			{"COM_STMT_EXECUTE with a string longer than the packet", append(append([]byte{wirefuzz.ComStmtExecute}, le32(id)...),
				append([]byte{0, 1, 0, 0, 0, 0, 1, 0xfd, 0, 0xfd, 0}, append(huge, 1, 'x')...)...), 1835, true},
			{"COM_BINLOG_DUMP_GTID with a file name longer than the packet", []byte("\x1e000000"), 1835, true},
			{"COM_REGISTER_SLAVE with a host name longer than the packet", []byte("\x15\x01\x00\x00\x00\x09ab"), 1835, true},
		}
		for _, tc := range cases {
			if tc.mysqlOnly && strings.HasSuffix(t.Name(), "/mariadb") {
				continue
			}
			if err := c.WriteCommand(tc.payload); err != nil {
				t.Fatal(err)
			}
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatalf("%s: no answer: %v", tc.name, err)
			}
			var se *wirefuzz.ServerError
			if len(p) == 0 || p[0] != 0xff {
				t.Errorf("%s: answered %x, want error %d", tc.name, p, tc.code)
			} else if se = wirefuzz.ErrorMessages([][]byte{p})[0]; se.Code != tc.code {
				t.Errorf("%s: error %v, want %d", tc.name, se, tc.code)
			}
			run(t, c, []step{{sql: "SELECT 1", want: []uint16{ac}, rows: "[[1]]"}})
		}
		if res, err := c.Execute(id, "a", int64(2)); err != nil || len(res) != 1 {
			var se *wirefuzz.ServerError
			errors.As(err, &se)
			t.Errorf("execute after the malformed commands: %v", err)
		}
	})
}

// TestUnreadableHandshake sends handshake responses vitess read past
// their ends (panicking, with no answer): one shorter than its fixed 32
// bytes, and one whose auth response's length is 2^64-1. Each gets
// MySQL's 1043 (Bad handshake), as from MariaDB 10.11, and the server
// goes on.
func TestUnreadableHandshake(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		cfg, err := mysql.ParseDSN(s.DSN)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"short", "auth length 2^64-1"} {
			c, g, err := wirefuzz.Dial(cfg.Addr, time.Now().Add(ioTimeout))
			if err != nil {
				t.Fatal(err)
			}
			resp := wirefuzz.HandshakeResponse(g, cfg.User, cfg.Passwd, "")
			if name == "short" {
				resp = resp[:12]
			} else {
				// The auth response's length after the user name;
				// CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA set.
				binary.LittleEndian.PutUint32(resp, binary.LittleEndian.Uint32(resp)|1<<21)
				end := 32 + len(cfg.User) + 1
				resp = append(append(resp[:end:end], 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff), 'x')
			}
			if err := c.WriteRaw(wirefuzz.Frame(1, resp)); err != nil {
				t.Fatal(err)
			}
			p, err := c.ReadPacket()
			c.Close()
			if err != nil || len(p) == 0 || p[0] != 0xff {
				t.Errorf("%s: answered %x (%v), want error 1043", name, p, err)
				continue
			}
			if se := wirefuzz.ErrorMessages([][]byte{p})[0]; se.Code != 1043 {
				t.Errorf("%s: %v, want error 1043", name, se)
			}
		}
		c, _ := dial(t, s)
		run(t, c, []step{{sql: "SELECT 1", want: []uint16{ac}, rows: "[[1]]"}})
	})
}
