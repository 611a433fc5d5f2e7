package wirefuzz

import (
	"bytes"
	"errors"
	"strconv"
	"testing"
	"time"
)

// TestPacketOverMaxAllowedPacket sends a command larger than
// max_allowed_packet. MySQL refuses it with ER_NET_PACKET_TOO_LARGE (1153)
// and closes the connection, without running it; that, or a close without
// an answer, is what the test accepts. The limit is lowered to its minimum
// (1024) so that the packet is small; the default, 1 GiB in GMS, would
// need a gigabyte on the socket.
//
// percdb refuses it as MySQL does, before vitess reads it (sql/wire).
func TestPacketOverMaxAllowedPacket(t *testing.T) {
	tg := startTarget(t)
	admin := tg.login(t, "")
	defer admin.Close()
	rows, err := admin.Query("SELECT @@GLOBAL.max_allowed_packet")
	if err != nil || len(rows) != 1 {
		t.Fatalf("read max_allowed_packet: %v %v", rows, err)
	}
	saved := rows[0][0]
	if _, err := strconv.ParseUint(saved, 10, 64); err != nil {
		t.Fatalf("max_allowed_packet = %q", saved)
	}
	// GMS keeps global variables in process-wide state: put it back.
	t.Cleanup(func() {
		c := tg.login(t, "")
		defer c.Close()
		if _, err := c.Query("SET GLOBAL max_allowed_packet = " + saved); err != nil {
			t.Errorf("restore max_allowed_packet: %v", err)
		}
	})
	if _, err := admin.Query("SET GLOBAL max_allowed_packet = 1024"); err != nil {
		t.Fatalf("lower max_allowed_packet: %v", err)
	}

	c := tg.login(t, "")
	const size = 4096
	q := "SELECT LENGTH('" + string(bytes.Repeat([]byte("a"), size)) + "')"
	if err := c.SetDeadline(time.Now().Add(ioTimeout)); err != nil {
		t.Fatal(err)
	}
	rows, err = c.Query(q)
	c.Close()
	var se *ServerError
	switch {
	case errors.As(err, &se) && se.Code == 1153:
		// MySQL's answer.
	case err != nil && !errors.As(err, &se):
		// Closed without an answer: also refused.
	default:
		t.Fatalf("a %d-byte command under max_allowed_packet=1024: rows %v, error %v; want error 1153 or a closed connection", len(q)+1, rows, err)
	}
	tg.healthy(t, "an oversized packet")
}
