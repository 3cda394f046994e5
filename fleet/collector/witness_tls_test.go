package collector_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/collector"
)

// tlsFiles writes a self-signed certificate for 127.0.0.1 and its key
// (PEM) to dir, and returns their paths.
func tlsFiles(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opx collector witness test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// TestWitness_Interop_TransparencyDevClient_TLS: the collector's
// add-checkpoint in HTTPS (Config.WitnessServe.TLS, as --witness-tls-cert
// sets it), driven by transparency-dev's client trusting the
// certificate through SSL_CERT_FILE (its own http.Client, unchanged):
// cosigned, and the cosignature verifies; the same client in plain HTTP
// to that port is refused and nothing is cosigned for it.
func TestWitness_Interop_TransparencyDevClient_TLS(t *testing.T) {
	bin := witnessClient(t)
	certFile, keyFile := tlsFiles(t, t.TempDir())
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	lg := newTestLog(t, "example.com/interop-tls")
	srv := startServer(t)
	r := startCollector(t, srv.ClientURL(), t.TempDir(), func(c *collector.Config) {
		c.WitnessListen = "127.0.0.1:0"
		c.WitnessLogs = []collector.WitnessLog{{Origin: lg.origin, Key: lg.signer.Verifier().String()}}
		c.WitnessServe.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	})
	waitFor(t, "the witness listener", func() bool { return r.c.WitnessAddr() != "" })
	addr, key := r.c.WitnessAddr(), r.c.WitnessKey()
	lg.grow(t, 4)
	if got := runWitnessClient(t, bin, "http://"+addr, key, 0, nil, lg.checkpoint(t, 4)); strings.HasPrefix(got, "cosigned") {
		t.Fatalf("plain HTTP to the HTTPS port: %s", got)
	}
	if got := runWitnessClient(t, bin, "https://"+addr, key, 0, nil, lg.checkpoint(t, 4)); !strings.HasPrefix(got, "refused") || !strings.Contains(got, "certificate") {
		t.Fatalf("HTTPS without trusting the certificate: %s", got)
	}
	if got := runWitnessClient(t, bin, "https://"+addr, key, 0, nil, lg.checkpoint(t, 4), "SSL_CERT_FILE="+certFile); !strings.HasPrefix(got, "cosigned ") {
		t.Fatalf("over HTTPS: %s", got)
	}
	lg.grow(t, 3)
	if got := runWitnessClient(t, bin, "https://"+addr, key, 4, lg.proof(t, 4, 7), lg.checkpoint(t, 7), "SSL_CERT_FILE="+certFile); !strings.HasPrefix(got, "cosigned ") {
		t.Fatalf("an extension over HTTPS: %s", got)
	}
}
