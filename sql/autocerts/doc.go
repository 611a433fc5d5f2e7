// Package autocerts gives a percdb node a TLS certificate when its
// operator configured none, as MySQL 8's auto_generate_certs does: at the
// first start it creates, in the data directory, a self-signed CA
// (ca.pem, ca-key.pem) and a server certificate signed by it with its key
// (server-cert.pem, server-key.pem), and later starts use those files. So
// clients that ask for TLS without verifying the server (`mariadb --ssl`,
// ssl-mode=REQUIRED, go-sql-driver's tls=skip-verify) connect out of the
// box, and a client can verify the server against ca.pem.
//
// Keys are ECDSA P-256 (quick to generate, accepted by every MySQL client
// library with TLS 1.2); the certificates are valid for ten years, as
// MySQL's, and the server's names localhost, 127.0.0.1 and ::1.
package autocerts
