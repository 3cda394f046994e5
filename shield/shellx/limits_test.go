package shellx_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/opx-dev/opx/shield/shellx"
)

// checkLimits fails when a violates the bounds every Analysis keeps.
func checkLimits(t *testing.T, line string, a shellx.Analysis) {
	t.Helper()
	if len(a.Commands) > shellx.MaxCommands {
		t.Errorf("%d commands, more than MaxCommands", len(a.Commands))
	}
	if len(a.Literals) > shellx.MaxLiterals {
		t.Errorf("%d literals, more than MaxLiterals", len(a.Literals))
	}
	for i, c := range a.Commands {
		if c.Depth < 0 || c.Depth > shellx.MaxDepth {
			t.Errorf("command %d depth %d", i, c.Depth)
		}
		if c.PipeIn >= i || c.PipeIn < -1 {
			t.Errorf("command %d PipeIn %d: not an earlier command", i, c.PipeIn)
		}
		if c.Depth == 0 && c.Via == "" && !strings.Contains(line, c.Line) {
			t.Errorf("command %d Line %q is not in the line", i, c.Line)
		}
	}
}

// FuzzParse checks that Parse never panics, keeps its limits and is
// deterministic. Seeds: testdata/fuzz/FuzzParse and the table's lines.
func FuzzParse(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.line)
	}
	for _, line := range benchLines {
		f.Add(line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		a := shellx.Parse(line)
		checkLimits(t, line, a)
		if errors.Is(a.Err, shellx.ErrInternal) {
			t.Fatalf("Parse(%q): %v", line, a.Err)
		}
		if b := shellx.Parse(line); !reflect.DeepEqual(a, b) {
			t.Errorf("Parse(%q) differs between two runs", line)
		}
	})
}

// TestParse_Worst runs shapes chosen to blow up a naive reader: each must
// end within the limits, with an Err naming what was refused where it is
// refused. (The run time of each is linear in the line; the benchmark
// BenchmarkParse_Worst reports it.)
func TestParse_Worst(t *testing.T) {
	for _, tc := range worstCases {
		a := shellx.Parse(tc.line)
		checkLimits(t, tc.line, a)
		switch {
		case tc.err == nil && a.Err != nil:
			t.Errorf("%s: unexpected err %v", tc.name, a.Err)
		case tc.err != nil && !errors.Is(a.Err, tc.err):
			t.Errorf("%s: err = %v, want %v", tc.name, a.Err, tc.err)
		}
		if tc.check != nil {
			tc.check(t, a)
		}
	}
}

var worstCases = []struct {
	name  string
	line  string
	err   error
	check func(*testing.T, shellx.Analysis)
}{
	{name: "1 MB of $(", line: strings.Repeat("$(", shellx.MaxLineBytes/2), err: shellx.ErrTooDeep},
	{name: "over MaxLineBytes", line: strings.Repeat("a", shellx.MaxLineBytes+1), err: shellx.ErrTooLong},
	{name: "100k ;", line: strings.Repeat("a;", 100000), err: shellx.ErrTooMany},
	{name: "100k |", line: strings.Repeat("a | ", 100000) + "b", err: shellx.ErrTooDeep},
	{name: "nested quotes", line: strings.Repeat(`"$(echo `, 5000), err: shellx.ErrTooDeep},
	{name: "nested backquotes", line: "echo " + strings.Repeat("`echo \\", 300) + "`", err: shellx.ErrTooDeep},
	{
		name: "{a,b} x 40", line: "echo " + strings.Repeat("{a,b}", 40),
		check: func(t *testing.T, a shellx.Analysis) {
			if w := a.Commands[0].Args[1]; len(a.Commands[0].Args) != 2 || !w.Dynamic {
				t.Errorf("{a,b}x40: got %d words, want one Dynamic word", len(a.Commands[0].Args))
			}
		},
	},
	{
		name: "{1..100000}", line: "echo {1..100000}",
		check: func(t *testing.T, a shellx.Analysis) {
			if !a.Commands[0].Args[1].Dynamic {
				t.Error("a long sequence is not Dynamic")
			}
		},
	},
	{name: "eval of eval", line: strings.Repeat("eval ", 100) + "x", err: shellx.ErrTooDeep},
	{name: "sh -c in sh -c", line: nestedShC(8), err: shellx.ErrTooDeep},
	{name: "base64 of base64", line: "echo " + base64Nest("rm -rf /", 6) + strings.Repeat(" | base64 -d", 6) + " | sh"},
	{
		name: "doubling variable", line: "X=aaaaaaaaaaaaaaaa; " + strings.Repeat("X=$X$X$X$X; ", 30) + strings.Repeat("echo $X $X $X $X; ", 200),
		check: func(t *testing.T, a shellx.Analysis) {
			for _, c := range a.Commands {
				for _, w := range c.Args {
					if len(w.Text) > 1<<17 {
						t.Fatalf("a word of %d bytes", len(w.Text))
					}
				}
			}
		},
	},
	{name: "200k substitutions in one command", line: "echo " + strings.Repeat("$(a) ", 200000), err: shellx.ErrTooMany},
	{name: "200k arithmetic words", line: "echo " + strings.Repeat("$((a+1)) ", 100000)},
	{name: "long python", line: "python3 -c '" + strings.Repeat(`os.system("x");`, 60000) + "'", err: shellx.ErrTooMany},
	{name: "100k exported variables, 4k payloads", line: "export " + manyAssigns(100000) + "; " + strings.Repeat("sh -c x; . f; ", 2000), err: shellx.ErrTooMuchWork},
	{name: "400k words", line: "echo " + strings.Repeat("w ", 400000)},
	{name: "10k heredocs", line: strings.Repeat("cat <<E\n", 10000) + "x\n" + strings.Repeat("E\n", 10000), err: shellx.ErrTooMany},
	{name: "nested loops", line: strings.Repeat("for a in 1 2 3 4; do ", 100) + "echo $a" + strings.Repeat("; done", 100)},
	{name: "python deep exec", line: "python3 -c '" + pyExecNest("x", 8) + "'", err: shellx.ErrTooDeep},
	{name: "many literals", line: "python3 -c '" + manyLiterals(5000) + "'", err: shellx.ErrTooMany},
}

func manyAssigns(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(" v")
		b.WriteString(itoa(i))
		b.WriteString("=1")
	}
	return b.String()
}

func nestedShC(n int) string {
	s := "id"
	for i := 0; i < n; i++ {
		s = "sh -c " + shQuote(s)
	}
	return s
}

// pyExecNest nests s in n python exec("...") calls.
func pyExecNest(s string, n int) string {
	for i := 0; i < n; i++ {
		s = `exec("` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `")`
	}
	return s
}

func shQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func base64Nest(s string, n int) string {
	for i := 0; i < n; i++ {
		s = b64(s)
	}
	return s
}

func manyLiterals(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(`x = "lit`)
		b.WriteString(itoa(i))
		b.WriteString("\"\n")
	}
	return b.String()
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	var d []byte
	for ; i > 0; i /= 10 {
		d = append([]byte{byte('0' + i%10)}, d...)
	}
	return string(d)
}

// TestParse_FunctionsCalledExponentially: functions that each call the
// one before twice would list 2^30 bodies; the command bound stops it
// with an error (Shield asks), whatever the nesting.
func TestParse_FunctionsCalledExponentially(t *testing.T) {
	var b strings.Builder
	b.WriteString("f0() { echo x; }; ")
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, "f%d() { f%d; f%d; }; ", i, i-1, i-1)
	}
	b.WriteString("f30")
	a := shellx.Parse(b.String())
	if a.Err == nil || len(a.Commands) > shellx.MaxCommands {
		t.Fatalf("%d commands, err %v: want the command bound's error", len(a.Commands), a.Err)
	}
}
