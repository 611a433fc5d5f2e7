package autocerts

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// The files Ensure keeps in the data directory, MySQL's names.
const (
	CAFile     = "ca.pem"
	CAKeyFile  = "ca-key.pem"
	CertFile   = "server-cert.pem"
	KeyFile    = "server-key.pem"
	validYears = 10
)

// Ensure returns the paths of the server certificate and key in dir,
// generating the CA, the certificate and the key first when none of the
// four files is there. Files left by an earlier start are used as they
// are; some but not all of them is an error (a partial or deliberate
// change the operator must settle), as is a pair that does not load.
// name goes into the certificates' common names.
func Ensure(dir, name string) (certPath, keyPath string, err error) {
	paths := map[string]string{}
	var have, missing []string
	for _, f := range []string{CAFile, CAKeyFile, CertFile, KeyFile} {
		p := filepath.Join(dir, f)
		paths[f] = p
		switch _, err := os.Stat(p); {
		case err == nil:
			have = append(have, f)
		case errors.Is(err, fs.ErrNotExist):
			missing = append(missing, f)
		default:
			return "", "", fmt.Errorf("auto-generated TLS files: %w", err)
		}
	}
	switch {
	case len(have) == 0:
		if err := generate(dir, name, time.Now()); err != nil {
			return "", "", fmt.Errorf("generate TLS certificates in %s: %w", dir, err)
		}
	case len(missing) > 0:
		return "", "", fmt.Errorf("auto-generated TLS files in %s: %v present but %v missing; remove them all to generate new ones, or give --ssl-cert and --ssl-key", dir, have, missing)
	}
	return paths[CertFile], paths[KeyFile], nil
}

// generate writes a new CA and a server certificate it signed, with their
// keys, to dir. The server certificate is written last, so that a crash
// half way leaves a set Ensure refuses rather than one it would use.
func generate(dir, name string, now time.Time) error {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	notBefore, notAfter := now.Add(-time.Hour), now.AddDate(validYears, 0, 0)
	caTmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: name + "_Auto_Generated_CA_Certificate"},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	serverTmpl := &x509.Certificate{
		Subject:     pkix.Name{CommonName: name + "_Auto_Generated_Server_Certificate"},
		NotBefore:   notBefore,
		NotAfter:    notAfter,
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, t := range []*x509.Certificate{caTmpl, serverTmpl} {
		if t.SerialNumber, err = rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127)); err != nil {
			return err
		}
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	serverDER, err := x509.CreateCertificate(rand.Reader, serverTmpl, ca, &serverKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	caKeyDER, err := x509.MarshalPKCS8PrivateKey(caKey)
	if err != nil {
		return err
	}
	serverKeyDER, err := x509.MarshalPKCS8PrivateKey(serverKey)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		name, typ string
		der       []byte
		mode      os.FileMode
	}{
		{CAKeyFile, "PRIVATE KEY", caKeyDER, 0o600},
		{CAFile, "CERTIFICATE", caDER, 0o644},
		{KeyFile, "PRIVATE KEY", serverKeyDER, 0o600},
		{CertFile, "CERTIFICATE", serverDER, 0o644},
	} {
		if err := writeFile(filepath.Join(dir, f.name), pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), f.mode); err != nil {
			return err
		}
	}
	return nil
}

// writeFile writes data to path through a temporary file renamed into
// place, so that path is either absent or whole.
func writeFile(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
