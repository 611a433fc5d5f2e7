package sql

import (
	"crypto/tls"
	"net"

	gsql "github.com/dolthub/go-mysql-server/sql"
)

// GMS declares MySQL's session status variables Ssl_cipher and
// Ssl_version but never sets them, so SHOW STATUS LIKE 'Ssl_cipher' is
// empty on a TLS connection, and clients that check it to see whether
// their connection is encrypted (go-sql-driver's own tests, monitoring
// scripts) conclude it is not. A session is created at the connection's
// first command, after the TLS handshake, so the cipher is known then.
// Go names its cipher suites by their IANA names (TLS_AES_128_GCM_SHA256),
// which are also OpenSSL's, and so MySQL's, for TLS 1.3; for TLS 1.2 OpenSSL
// has names of its own (ECDHE-RSA-AES128-GCM-SHA256) and percdb gives the
// IANA one.

// setTLSStatus sets sess's Ssl_cipher and Ssl_version from conn when the
// client connected over TLS, and leaves them empty otherwise, as MySQL
// does.
func setTLSStatus(sess gsql.Session, conn net.Conn) error {
	// A *tls.Conn, or percdb's own connection, which terminates TLS
	// (package wire).
	tc, ok := conn.(interface{ ConnectionState() tls.ConnectionState })
	if !ok {
		return nil
	}
	st := tc.ConnectionState()
	if !st.HandshakeComplete {
		return nil
	}
	if err := sess.SetStatusVariable(nil, "Ssl_cipher", tls.CipherSuiteName(st.CipherSuite)); err != nil {
		return err
	}
	return sess.SetStatusVariable(nil, "Ssl_version", mysqlTLSVersion(st.Version))
}

// mysqlTLSVersion is MySQL's name of a TLS version (TLSv1.2, TLSv1.3).
func mysqlTLSVersion(v uint16) string {
	switch v {
	case tls.VersionTLS10:
		return "TLSv1"
	case tls.VersionTLS11:
		return "TLSv1.1"
	case tls.VersionTLS12:
		return "TLSv1.2"
	case tls.VersionTLS13:
		return "TLSv1.3"
	}
	return tls.VersionName(v)
}
