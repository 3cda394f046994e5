package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestE2E_CollectorWitnessTLS: `opx collector --witness-listen
// 0.0.0.0:PORT --witness-tls-cert F --witness-tls-key K` (beyond
// loopback, allowed because of the certificate) serves add-checkpoint in
// HTTPS: a client that trusts the certificate is answered by the witness
// (an origin it does not witness: 404), plain HTTP to the port is not.
func TestE2E_CollectorWitnessTLS(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opx e2e witness"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}), 0o600)

	col := startCollector(t, bin, t.TempDir(), "--embedded-nats", t.TempDir(), "--listen", "127.0.0.1:0",
		"--witness-listen", "0.0.0.0:0", "--witness-tls-cert", certFile, "--witness-tls-key", keyFile)
	re := regexp.MustCompile(`serving POST https://[^ ]*:(\d+)/add-checkpoint`)
	var port string
	waitFor(t, "the witness listener", func() bool {
		if m := re.FindStringSubmatch(col.out.String()); m != nil {
			port = m[1]
		}
		return port != ""
	})
	if strings.Contains(col.out.String(), "plain HTTP beyond loopback") {
		t.Errorf("a warning about plain HTTP with a certificate:\n%s", col.out.String())
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	body := "old 0\n\nexample.com/nobody\n1\nPlRNCrwHpqhGrupue0L7gxbjbMiKA9temvuZZDDpkaw=\n\n— example.com/nobody AAAAAQ==\n"
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := c.Post("https://127.0.0.1:"+port+"/add-checkpoint", "text/plain", strings.NewReader(body))
	if err != nil {
		t.Fatalf("over HTTPS: %v\n%s", err, col.out.String())
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || !strings.Contains(string(b), "unknown origin") {
		t.Fatalf("over HTTPS: %d %q, want the witness's 404", resp.StatusCode, b)
	}
	resp, err = http.Post("http://127.0.0.1:"+port+"/add-checkpoint", "text/plain", strings.NewReader(body))
	if err == nil {
		b, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || strings.Contains(string(b), "unknown origin") {
			t.Fatalf("plain HTTP to the HTTPS port: %d %q", resp.StatusCode, b)
		}
	}
	col.stop(t)
}
