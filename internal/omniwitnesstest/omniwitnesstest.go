package omniwitnesstest

import (
	"crypto/rand"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	tdnote "github.com/transparency-dev/formats/note"
	"golang.org/x/mod/sumdb/note"
)

// BuildCommand builds omniwitness as .ci/run does.
const BuildCommand = "cd .ci/tools && CGO_ENABLED=0 go build -o ../bin/omniwitness github.com/transparency-dev/witness/cmd/omniwitness"

// Root is the module root (this file is internal/omniwitnesstest/).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Binary returns the omniwitness binary: $OPX_OMNIWITNESS, else
// .ci/bin/omniwitness, else one on PATH. None skips the test, or fails
// it under CI=true.
func Binary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("OPX_OMNIWITNESS"), filepath.Join(Root(), ".ci", "bin", "omniwitness")} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	p, err := exec.LookPath("omniwitness")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("omniwitness is not built (.ci/run builds it: %s)", BuildCommand)
		}
		t.Skipf("omniwitness is not built (.ci/run builds it: %s)", BuildCommand)
	}
	return p
}

// Witness is a running omniwitness.
type Witness struct {
	URL  string // http://127.0.0.1:PORT, the submission prefix
	VKey string // its verifier key, cosignature/v1
	dir  string
	args []string
	bin  string
	cmd  *exec.Cmd
	t    testing.TB
}

// Start runs omniwitness on loopback with one log: origin and its
// verifier key (an opx ledger's, `opx ledger key`). Call it, or Binary,
// on the test's goroutine: it skips or fails the test (runtime.Goexit),
// which on another goroutine would end that goroutine instead.
func Start(t testing.TB, origin, logVKey string) *Witness {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	skey, vkey, err := note.GenerateKey(rand.Reader, "omniwitness.opx.test")
	if err != nil {
		t.Fatal(err)
	}
	if vkey, err = tdnote.VKeyToCosignatureV1(vkey); err != nil {
		t.Fatal(err)
	}
	logs := fmt.Sprintf("Logs:\n  - Origin: %q\n    PublicKey: %q\n", origin, logVKey)
	for name, content := range map[string]string{"witness.key": skey, "logs.yaml": logs} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	w := &Witness{VKey: vkey, dir: dir, bin: bin, t: t}
	w.Restart()
	t.Cleanup(w.Stop)
	return w
}

// Restart (re)starts the process on a new port, keeping its database.
func (w *Witness) Restart() {
	w.t.Helper()
	w.Stop()
	addr := freePort(w.t)
	w.URL = "http://" + addr
	log, err := os.OpenFile(filepath.Join(w.dir, "omniwitness.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		w.t.Fatal(err)
	}
	defer log.Close()
	w.cmd = exec.Command(w.bin, "--listen", addr, "--metrics_listen", "",
		"--db_file", filepath.Join(w.dir, "witness.db"),
		"--private_key_path", filepath.Join(w.dir, "witness.key"),
		"--additional_logs", filepath.Join(w.dir, "logs.yaml"),
		"--logtostderr")
	w.cmd.Stdout, w.cmd.Stderr = log, log
	if err := w.cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("omniwitness did not listen on %s within 30s: %v\n%s", addr, err, w.Log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop stops the process (SIGTERM, SIGKILL after 5s).
func (w *Witness) Stop() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	done := make(chan struct{})
	go func() { w.cmd.Wait(); close(done) }()
	w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		w.cmd.Process.Kill()
		<-done
	}
	w.cmd = nil
}

// Log is what omniwitness wrote, for a failure message.
func (w *Witness) Log() string {
	b, _ := os.ReadFile(filepath.Join(w.dir, "omniwitness.log"))
	s := string(b)
	if len(s) > 4000 {
		s = "..." + s[len(s)-4000:]
	}
	return strings.TrimSpace(s)
}

// freePort returns a loopback address free a moment ago.
func freePort(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
