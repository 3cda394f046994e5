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
		port, err := readProtocol(strings.NewReader(tt.in), time.Second)
		if (err != nil) != tt.bad || port != tt.port {
			t.Errorf("readProtocol(%q) = %d, %v", tt.in, port, err)
		}
	}
	r, w := io.Pipe()
	defer w.Close()
	go w.Write([]byte("PORT:5\n"))
	if _, err := readProtocol(r, 50*time.Millisecond); !errors.Is(err, ErrStartTimeout) {
		t.Errorf("silent engine: %v, want ErrStartTimeout", err)
	}
}
