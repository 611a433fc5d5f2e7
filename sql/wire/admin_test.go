package wire

import "testing"

func TestRefreshStatement(t *testing.T) {
	for _, tc := range []struct {
		flags byte
		want  string
	}{
		{0, "DO 0"},
		{0x20 | 0x40 | 0x80, "DO 0"}, // THREADS, SLAVE, MASTER: nothing to act on
		{0x02, "FLUSH LOGS"},
		{0x04, "FLUSH TABLES"},
		{0x08, "FLUSH HOSTS"},
		{0x02 | 0x04 | 0x08 | 0x20, "FLUSH LOGS"}, // mariadb-admin refresh
		{0x01 | 0x02, "FLUSH PRIVILEGES"},
		{0x10 | 0x01, "FLUSH STATUS"},
	} {
		if got := refreshStatement(tc.flags); got != tc.want {
			t.Errorf("refreshStatement(%#02x) = %q, want %q", tc.flags, got, tc.want)
		}
	}
}
