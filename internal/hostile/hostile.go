package hostile

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// Case is one hostile input.
type Case struct {
	Name string
	Data []byte
}

// Contents returns hostile contents for a text format whose readers take
// at most max bytes, built around a valid example: the example truncated
// at several points, random bytes, a file one byte over max, a line of
// max bytes, JSON and YAML nested and aliased beyond any sense, and
// invalid UTF-8 inside the example.
func Contents(valid []byte, max int64) []Case {
	rng := rand.New(rand.NewSource(1))
	random := make([]byte, 64<<10)
	rng.Read(random)
	cases := []Case{
		{"empty", nil},
		{"random bytes", random},
		{"NUL bytes", make([]byte, 4096)},
		{"one byte over the bound", bytes.Repeat([]byte("a"), int(max)+1)},
		{"one long line at the bound", append(bytes.Repeat([]byte("x"), int(max)-1), '\n')},
		{"newlines only", bytes.Repeat([]byte("\n"), int(max))},
		{"json nesting bomb", []byte(strings.Repeat("[", int(max/2)) + strings.Repeat("]", int(max/2)))},
		{"json object nesting bomb", []byte(strings.Repeat(`{"a":`, int(max/10)) + "1" + strings.Repeat("}", int(max/10)))},
		{"yaml flow nesting bomb", []byte("a: " + strings.Repeat("[", int(max/2)))},
		{"yaml block nesting bomb", yamlBlockNesting(int(max))},
		{"yaml alias bomb", yamlAliasBomb()},
		{"invalid utf-8", invalidUTF8(valid)},
		{"crlf line ends", bytes.ReplaceAll(valid, []byte("\n"), []byte("\r\n"))},
	}
	for _, at := range []int{1, len(valid) / 3, len(valid) / 2, len(valid) - 1} {
		if at > 0 && at < len(valid) {
			cases = append(cases, Case{Name: "truncated at " + strconv.Itoa(at), Data: valid[:at]})
		}
	}
	return cases
}

// Special makes, in a fresh directory, paths that are not regular files
// (a directory, a FIFO with no writer, a symlink to /dev/zero and one to
// /dev/urandom) and returns them by name.
func Special(t testing.TB) map[string]string {
	t.Helper()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	zero, urandom := filepath.Join(dir, "zero"), filepath.Join(dir, "urandom")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/urandom", urandom); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"directory": sub, "fifo": fifo, "/dev/zero": zero, "/dev/urandom": urandom}
}

// yamlBlockNesting is a block mapping indented one level deeper per line
// until it fills max bytes.
func yamlBlockNesting(max int) []byte {
	var b bytes.Buffer
	for depth := 0; b.Len() < max-depth-4; depth++ {
		b.WriteString(strings.Repeat(" ", depth))
		b.WriteString("a:\n")
	}
	return b.Bytes()
}

// yamlAliasBomb is the "billion laughs" document: nine levels, each a
// list of ten aliases of the one before.
func yamlAliasBomb() []byte {
	var b strings.Builder
	b.WriteString("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		b.WriteString(n + ": &" + n + " [")
		for i := 0; i < 9; i++ {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("*" + prev)
		}
		b.WriteString("]\n")
		prev = n
	}
	return []byte(b.String())
}

// invalidUTF8 puts bytes that are not UTF-8 in the middle of valid.
func invalidUTF8(valid []byte) []byte {
	mid := len(valid) / 2
	out := append([]byte{}, valid[:mid]...)
	out = append(out, 0xff, 0xfe, 0xc0, 0x80, 0xed, 0xa0, 0x80)
	return append(out, valid[mid:]...)
}

// Allocated returns the bytes f allocated on the heap (runtime.MemStats
// TotalAlloc before and after; run it without parallel tests beside it).
func Allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
