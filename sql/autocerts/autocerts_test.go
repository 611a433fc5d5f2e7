package autocerts

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsure generates the files once, checks that the server
// certificate chains to the CA for the names a local client uses, and
// that a second call keeps them.
func TestEnsure(t *testing.T) {
	dir := t.TempDir()
	cert, key, err := Ensure(dir, "percdb_8.0.36")
	if err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, CAFile))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("ca.pem holds no certificate")
	}
	for _, host := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host}); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if !strings.Contains(leaf.Subject.CommonName, "percdb_8.0.36") {
		t.Errorf("common name %q", leaf.Subject.CommonName)
	}
	for _, f := range []string{CAKeyFile, KeyFile} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, mode %v; want 0600", f, err, st.Mode())
		}
	}

	before, _ := os.ReadFile(cert)
	cert2, key2, err := Ensure(dir, "percdb_8.0.36")
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(cert2)
	if cert2 != cert || key2 != key || !bytes.Equal(before, after) {
		t.Error("second Ensure did not keep the files")
	}
}

// TestEnsurePartial refuses a directory with some of the files only.
func TestEnsurePartial(t *testing.T) {
	dir := t.TempDir()
	if _, _, err := Ensure(dir, "x"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, KeyFile)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Ensure(dir, "x"); err == nil || !strings.Contains(err.Error(), KeyFile) {
		t.Fatalf("Ensure with %s missing: %v", KeyFile, err)
	}
}
