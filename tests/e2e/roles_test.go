package e2e

import (
	"strings"
	"testing"
)

// TestRoleStatements runs with the mariadb client the role statements a
// dump's reload and account tools send, which GMS lacked: CURRENT_ROLE()
// (1105 before), SET ROLE, SET DEFAULT ROLE, ALTER USER ... DEFAULT ROLE
// (also inside a version comment) and GRANT/REVOKE ... CURRENT_USER()
// (1064 before). Every granted role stays active: asking for fewer is a
// warning 1235; a role not granted is 3530.
func TestRoleStatements(t *testing.T) {
	mariadbClient(t)
	s := startServer(t, "")
	mustExec(t, s.Open(""),
		"CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
		"CREATE ROLE r1, r2",
		"GRANT r1, r2 TO 'app'@'%'")
	out := runClient(t, s, "", "--batch", "--skip-column-names", "-e", `
		SELECT CURRENT_ROLE();
		CREATE ROLE IF NOT EXISTS imp;
		GRANT imp TO CURRENT_USER();
		SELECT CURRENT_ROLE();
		SET ROLE imp;
		SET ROLE ALL;
		SET ROLE DEFAULT;
		SET ROLE NONE;
		SHOW WARNINGS;
		REVOKE imp FROM CURRENT_USER();
		SELECT CURRENT_ROLE();
		SET DEFAULT ROLE NONE TO 'app'@'%';
		SHOW WARNINGS;
		ALTER USER 'app'@'%' DEFAULT ROLE ALL;
		/*!80001 ALTER USER 'app'@'%' DEFAULT ROLE r1, r2 */;
		SELECT COUNT(*) FROM mysql.default_roles;`)
	want := strings.Join([]string{
		"NONE",
		"`imp`@`%`",
		"Warning\t1235\tThis version of percdb doesn't yet support 'SET ROLE to fewer roles than are granted': every granted role stays active",
		"NONE",
		"Warning\t1235\tThis version of percdb doesn't yet support 'SET DEFAULT ROLE to fewer roles than are granted': every granted role stays active",
		"0",
	}, "\n") + "\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	host, port := s.HostPort()
	for _, c := range []struct{ stmt, want string }{
		{"SELECT CURRENT_ROLE()", "`r1`@`%`,`r2`@`%`\n"},
		{"SET ROLE r1", ""},
		{"SET ROLE imp", "ERROR 3530 (HY000) at line 1: `imp`@`%` is not granted to `app`@`%`\n"},
		{"SET DEFAULT ROLE r1 TO 'root'@'%'", "ERROR 1227 (42000) at line 1: Access denied; you need (at least one of) the CREATE USER privilege(s) for this operation\n"},
	} {
		// The client echoes a failed statement before its error.
		if got, _ := clientLogin(t, host, port, "app", "pw", "--batch", "--skip-column-names", "-e", c.stmt); !strings.HasSuffix(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("app: %s: %q, want %q", c.stmt, got, c.want)
		}
	}
}
