package sql

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/percdb/percdb/sql/autocerts"
)

// serverTLS returns the TLS configuration of the MySQL listener. With no
// certificate and key configured, it uses the ones generated in the data
// directory at the first start (package autocerts), as MySQL 8 does,
// unless DisableAutoCerts is set: then TLS is not offered (nil). Clients
// upgrade a connection with the MySQL protocol's SSL request, in the
// handshake, as from MySQL; TLS 1.2 is the oldest version accepted, as in
// MySQL 8.
func serverTLS(cfg Config) (*tls.Config, error) {
	certFile, keyFile := cfg.SSLCert, cfg.SSLKey
	switch {
	case certFile == "" && keyFile == "" && cfg.DisableAutoCerts:
		if cfg.RequireSecureTransport {
			return nil, errors.New("require secure transport: no certificate and key (--ssl-cert, --ssl-key, or --auto-generate-certs)")
		}
		return nil, nil
	case certFile == "" && keyFile == "":
		var err error
		if certFile, keyFile, err = autocerts.Ensure(cfg.DataDir, "percdb_"+cfg.Version); err != nil {
			return nil, err
		}
	case certFile == "" || keyFile == "":
		return nil, errors.New("TLS needs both a certificate (--ssl-cert) and a key (--ssl-key)")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %q and key %q: %w", certFile, keyFile, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}, nil
}
