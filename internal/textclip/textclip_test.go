package textclip_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/internal/textclip"
)

// TestCut pins the bytes Cut keeps: recorded fixtures hold its output,
// so a change here would change what a rerun records.
func TestCut(t *testing.T) {
	const euro = "€" // 3 bytes: e2 82 ac
	tests := []struct {
		name string
		s    string
		n    int
		want string
	}{
		{"empty", "", 0, ""},
		{"empty, budget", "", 3, ""},
		{"fits", "abc", 3, "abc"},
		{"fits with room", "abc", 10, "abc"},
		{"n=0", "abc", 0, ""},
		{"n=1", "abc", 1, "a"},
		{"n=3 ascii", "abcdef", 3, "abc"},
		{"n=0 multibyte", euro, 0, ""},
		{"n=1 inside a rune", euro, 1, ""},
		{"n=2 inside a rune", euro, 2, ""},
		{"n=3 whole rune", euro, 3, euro},
		{"n=3 before a rune", "ab" + euro, 3, "ab"},
		{"n=3 after a rune", euro + "x", 3, euro},
		{"n=4 inside the second rune", euro + euro, 4, euro},
		{"4-byte rune cut", "a\U0001F600", 3, "a"},
		// Invalid UTF-8 is not repaired: a stray byte before the cut is
		// kept, continuation bytes at the cut are backed off.
		{"invalid byte kept", "\xffabc", 2, "\xffa"},
		{"invalid n=1", "\xff\xfe", 1, "\xff"},
		{"stray continuations backed off", "a\x80\x80\x80", 3, ""},
		{"stray continuations after the cut", "ab\x80\x80", 2, "a"},
		{"only continuations", "\x80\x80\x80\x80", 3, ""},
		{"truncated rune at the end", "ab\xe2\x82", 3, "ab"},
		{"truncated rune fits", "ab\xe2\x82", 4, "ab\xe2\x82"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textclip.Cut(tt.s, tt.n)
			if got != tt.want {
				t.Errorf("Cut(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
			}
			if len(got) > tt.n || !strings.HasPrefix(tt.s, got) {
				t.Errorf("Cut(%q, %d) = %q: not a prefix of at most %d bytes", tt.s, tt.n, got, tt.n)
			}
		})
	}
}

// TestCut_Large: a cut deep inside a long run of continuation bytes
// backs off to the byte that starts one (the "x"), keeping what is
// before it.
func TestCut_Large(t *testing.T) {
	s := "ax" + strings.Repeat("\x80", 1<<20)
	if got := textclip.Cut(s, 1<<19); got != "a" {
		t.Fatalf("Cut = %d bytes, want \"a\"", len(got))
	}
}
