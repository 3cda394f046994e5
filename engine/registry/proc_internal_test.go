package registry

import (
	"errors"
	"testing"
)

func TestParseStat(t *testing.T) {
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 987654 20"
	tests := []struct {
		line string
		want uint64
		err  bool
	}{
		{"42 (opx) S" + tail, 987654, false},
		{"42 (a) b) S" + tail, 987654, false}, // a name with ") " in it
		{"42 (x y) R" + tail, 987654, false},
		{"42 (opx) Z" + tail, 0, true},
		{"42 (opx) S 1 2", 0, true},
		{"garbage", 0, true},
	}
	for _, tt := range tests {
		got, err := parseStat(tt.line)
		if got != tt.want || (err != nil) != tt.err {
			t.Errorf("parseStat(%q) = %d, %v", tt.line, got, err)
		}
	}
	if _, err := parseStat("42 (opx) X" + tail); !errors.Is(err, ErrGone) {
		t.Errorf("a dead task: %v, want ErrGone", err)
	}
}
