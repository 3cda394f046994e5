package witnesshttp_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/fleet/witnesshttp"
	"github.com/opx-dev/opx/ledger/tlog"
)

// testCert is a self-signed certificate for 127.0.0.1, and a pool that
// trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opx witness test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: cert}, pool
}

// serveTLS runs Serve with TLS on loopback and returns its address and a
// client that trusts its certificate.
func serveTLS(t *testing.T, w witnesshttp.Witness, sc witnesshttp.ServeConfig) (string, *http.Client) {
	t.Helper()
	cert, pool := testCert(t)
	sc.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- witnesshttp.Serve(ctx, ln, witnesshttp.New(w, witnesshttp.Options{Rate: 1000, Burst: 1000}), sc)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}
	t.Cleanup(tr.CloseIdleConnections)
	return ln.Addr().String(), &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

func postWith(t *testing.T, c *http.Client, url string, b []byte) (int, string, error) {
	t.Helper()
	resp, err := c.Post(url+tlog.AddCheckpointPath, "text/plain", bytes.NewReader(b))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(rb), nil
}

// TestServe_TLS_PlainHTTPFails: with TLS, a client that trusts the
// certificate is served over HTTPS; plain HTTP to the same port is
// answered 400 by the TLS layer and never reaches the witness; a client
// that does not trust the certificate fails its handshake.
func TestServe_TLS_PlainHTTPFails(t *testing.T) {
	f := newFake(nil)
	addr, client := serveTLS(t, f, witnesshttp.ServeConfig{})
	code, b, err := postWith(t, client, "https://"+addr, body("example.com/log"))
	if err != nil || code != 200 || b != sigLine {
		t.Fatalf("over HTTPS: %d %q %v", code, b, err)
	}
	code, b, err = postWith(t, http.DefaultClient, "http://"+addr, body("example.com/log"))
	if err == nil && code != 400 {
		t.Fatalf("plain HTTP to the TLS port: %d %q, want 400 or an error", code, b)
	}
	if _, _, err := postWith(t, &http.Client{Timeout: 20 * time.Second}, "https://"+addr, body("example.com/log")); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("a client that does not trust the certificate: %v", err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("the witness was asked %d times, want once (the HTTPS request)", n)
	}
}

// TestServe_TLS_HandshakeGarbage: bytes that are not a TLS handshake
// (random, an HTTP request line, a TLS record header announcing 16 MB)
// get the connection closed; the server goes on serving.
func TestServe_TLS_HandshakeGarbage(t *testing.T) {
	f := newFake(nil)
	addr, client := serveTLS(t, f, witnesshttp.ServeConfig{HeaderTimeout: 2 * time.Second})
	junk := make([]byte, 4096)
	rand.Read(junk)
	for name, b := range map[string][]byte{
		"random":             junk,
		"http request":       []byte("POST /add-checkpoint HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"),
		"huge record header": {0x16, 0x03, 0x01, 0xff, 0xff},
		"sslv2 hello":        {0x80, 0x2e, 0x01, 0x00, 0x02},
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write(b)
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(c); isTimeout(err) {
			t.Errorf("%s: the server did not close the connection: %v", name, err)
		}
		c.Close()
	}
	if code, b, err := postWith(t, client, "https://"+addr, body("example.com/log")); err != nil || code != 200 {
		t.Fatalf("after the garbage: %d %q %v", code, b, err)
	}
	if n := f.calls.Load(); n != 1 {
		t.Fatalf("the witness was asked %d times", n)
	}
}

// TestServe_TLS_Slowloris: connections that open and send part of a
// handshake hold a connection slot for HeaderTimeout at most: with every
// slot taken by them, an honest client is served once they are cut.
func TestServe_TLS_Slowloris(t *testing.T) {
	f := newFake(nil)
	const slots = 4
	addr, client := serveTLS(t, f, witnesshttp.ServeConfig{MaxConns: slots, HeaderTimeout: 300 * time.Millisecond})
	var slow []net.Conn
	for range slots + 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte{0x16, 0x03, 0x01}) // the start of a record header, then nothing
		slow = append(slow, c)
	}
	code, b, err := postWith(t, client, "https://"+addr, body("example.com/log"))
	if err != nil || code != 200 {
		t.Fatalf("an honest client behind %d slow ones: %d %q %v", len(slow), code, b, err)
	}
	for i, c := range slow {
		c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if _, err := io.ReadAll(c); isTimeout(err) {
			t.Errorf("slow connection %d was not cut: %v", i, err)
		}
		c.Close()
	}
}

// isTimeout reports whether err is a read deadline's: a connection the
// server closed reads EOF, or a reset when it closed with bytes unread.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
