package protocol

import (
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/percdb/percdb/tests/isolation/testserver"
)

// The administrative commands of the protocol that mariadb-admin and the
// mysql client send (vitess answered each with 1047 "command handling
// not implemented yet"): COM_STATISTICS (mariadb-admin status, the
// client's \s), COM_REFRESH (mariadb-admin refresh) and COM_DEBUG
// (mariadb-admin debug).
const (
	comRefresh    = 0x07
	comStatistics = 0x09
	comDebug      = 0x0d
)

// TestAdminCommands: COM_STATISTICS answers MySQL's line of text (not an
// OK packet) whose Questions count the statements run in between;
// COM_REFRESH and COM_DEBUG answer OK with the session's status flags (in
// a transaction, COM_DEBUG leaves it open).
func TestAdminCommands(t *testing.T) {
	forEachServer(t, func(t *testing.T, s *testserver.Server) {
		c, _ := dial(t, s)
		statistics := func() map[string]string {
			t.Helper()
			if err := c.WriteCommand([]byte{comStatistics}); err != nil {
				t.Fatal(err)
			}
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatalf("COM_STATISTICS: no answer: %v", err)
			}
			line := string(p)
			if !strings.HasPrefix(line, "Uptime: ") {
				t.Fatalf("COM_STATISTICS answered %q (%x), want MySQL's line", line, p)
			}
			fields := map[string]string{}
			for _, f := range strings.Split(line, "  ") {
				name, value, ok := strings.Cut(f, ": ")
				if !ok {
					t.Fatalf("COM_STATISTICS: field %q of %q", f, line)
				}
				fields[name] = value
			}
			for _, name := range []string{"Uptime", "Threads", "Questions", "Slow queries", "Opens", "Open tables", "Queries per second avg"} {
				if _, ok := fields[name]; !ok {
					t.Fatalf("COM_STATISTICS: no %s in %q", name, line)
				}
			}
			if n, err := strconv.Atoi(fields["Threads"]); err != nil || n < 1 {
				t.Errorf("COM_STATISTICS: Threads %q, want this connection counted", fields["Threads"])
			}
			return fields
		}
		before := statistics()
		for range 3 {
			if _, err := c.Query("SELECT 1"); err != nil {
				t.Fatal(err)
			}
		}
		after := statistics()
		q0, _ := strconv.Atoi(before["Questions"])
		q1, _ := strconv.Atoi(after["Questions"])
		if q1 < q0+3 {
			t.Errorf("COM_STATISTICS: Questions %d, then %d after three statements", q0, q1)
		}

		// ok sends a command and wants an OK packet with status flags
		// want (of those mask covers). MySQL and MariaDB answer
		// COM_DEBUG with an EOF packet (fe, warnings, status), percdb
		// with an OK packet: both are success to clients
		// (mysql_dump_debug_info reads any packet but an error), and the
		// status flags sit at the same offset in both.
		ok := func(name string, payload []byte, want uint16) {
			t.Helper()
			if err := c.WriteCommand(payload); err != nil {
				t.Fatal(err)
			}
			p, err := c.ReadPacket()
			if err != nil {
				t.Fatalf("%s: no answer: %v", name, err)
			}
			if len(p) < 5 || p[0] != 0x00 && p[0] != 0xfe || p[0] == 0x00 && (p[1] >= 0xfb || p[2] >= 0xfb) {
				t.Fatalf("%s: answered %x, want an OK packet", name, p)
			}
			if got := binary.LittleEndian.Uint16(p[3:]); got&mask != want {
				t.Errorf("%s: status %s, want %s", name, flags(got), flags(want))
			}
		}
		// REFRESH_LOG | REFRESH_TABLES | REFRESH_HOSTS, as mariadb-admin
		// flush-* and refresh send them.
		ok("COM_REFRESH", []byte{comRefresh, 0x02 | 0x04 | 0x08}, ac)
		ok("COM_DEBUG", []byte{comDebug}, ac)
		if _, err := c.Query("BEGIN"); err != nil {
			t.Fatal(err)
		}
		ok("COM_DEBUG in a transaction", []byte{comDebug}, ac|tx)
		if _, err := c.Query("COMMIT"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Query("SELECT 1"); err != nil {
			t.Fatalf("after the commands: %v", err)
		}
	})
}
