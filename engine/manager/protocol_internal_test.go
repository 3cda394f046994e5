package manager

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

func TestReadProtocol(t *testing.T) {
	tests := []struct {
		in   string
		port int
		bad  bool
	}{
		{"PORT:4242\nWEB_DISABLED\n", 4242, false},
		{"log line\nPORT:1\nWEB:8080\n", 1, false},
		{"PORT:7\nWEB_FAILED:8080:address in use\n", 7, false},
		{"WEB_DISABLED\n", 0, true},
		{"PORT:x\nWEB_DISABLED\n", 0, true},
		{"PORT:70000\nWEB_DISABLED\n", 0, true},
		{"PORT:1\n", 0, true},
	}
	for _, tt := range tests {
		port, refused, err := readProtocol(strings.NewReader(tt.in), time.Second)
		if (err != nil) != tt.bad || port != tt.port || refused != "" {
			t.Errorf("readProtocol(%q) = %d, %q, %v", tt.in, port, refused, err)
		}
	}
	// An engine that will not start says why, in one line.
	_, refused, err := readProtocol(strings.NewReader("REFUSED: ledger x: ledger is locked by another process\n"), time.Second)
	if !errors.Is(err, ErrEngineRefused) || refused != "ledger x: ledger is locked by another process" {
		t.Errorf("REFUSED: = %q, %v", refused, err)
	}
	_, refused, _ = readProtocol(strings.NewReader("REFUSED:"+strings.Repeat("x", 5000)+"\xff\n"), time.Second)
	if len(refused) > maxRefusal+3 || !strings.HasSuffix(refused, "...") {
		t.Errorf("an over-long reason is not cut: %d bytes", len(refused))
	}
	r, w := io.Pipe()
	defer w.Close()
	go w.Write([]byte("PORT:5\n"))
	if _, _, err := readProtocol(r, 50*time.Millisecond); !errors.Is(err, ErrStartTimeout) {
		t.Errorf("silent engine: %v, want ErrStartTimeout", err)
	}
}
