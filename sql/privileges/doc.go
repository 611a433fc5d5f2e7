// Package privileges is percdb's part of MySQL's accounts and privileges
// beside go-mysql-server's (GMS keeps the accounts, their grants and
// roles in its mysql_db and checks privileges itself). So far it holds
// roles (roles.go): CURRENT_ROLE(), SET ROLE, SET DEFAULT ROLE and ALTER
// USER ... DEFAULT ROLE, which check what MySQL checks and keep every
// granted role active as GMS does, and GRANT or REVOKE naming
// CURRENT_USER(), which the caller runs with the session's account in its
// place (ParseRoleStatement recognises them on the TiDB parser, which
// knows them where vitess does not); and how SHOW CREATE USER writes an
// account (QuoteAccountPart).
//
// It depends on GMS's mysql_db and the TiDB parser only. Running a
// statement in a session is package sql's (privileges_exec.go, called by
// the handler), as is what else of accounts is still there: the reload
// of the grant tables a dump restores (grantreload.go), SHOW CREATE USER
// (showcreateuser.go), account locking (accountlock.go) and the
// persistence of GMS's accounts (users.go).
package privileges
