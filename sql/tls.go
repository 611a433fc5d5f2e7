package sql

import (
	"crypto/tls"
	"errors"
	"fmt"
)

// serverTLS returns the TLS configuration of the MySQL listener: nil (TLS
// not offered) when neither certificate nor key is configured. Clients
// upgrade a connection with the MySQL protocol's SSL request, in the
// handshake, as from MySQL; TLS 1.2 is the oldest version accepted, as in
// MySQL 8.
func serverTLS(cfg Config) (*tls.Config, error) {
	if cfg.SSLCert == "" && cfg.SSLKey == "" {
		if cfg.RequireSecureTransport {
			return nil, errors.New("require secure transport: no certificate and key (--ssl-cert, --ssl-key)")
		}
		return nil, nil
	}
	if cfg.SSLCert == "" || cfg.SSLKey == "" {
		return nil, errors.New("TLS needs both a certificate (--ssl-cert) and a key (--ssl-key)")
	}
	cert, err := tls.LoadX509KeyPair(cfg.SSLCert, cfg.SSLKey)
	if err != nil {
		return nil, fmt.Errorf("load TLS certificate %q and key %q: %w", cfg.SSLCert, cfg.SSLKey, err)
	}
	return &tls.Config{
		Certificates: []tls.Certificate{cert},
		MinVersion:   tls.VersionTLS12,
	}, nil
}
