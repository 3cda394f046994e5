package shellx

import (
	"strings"
	"testing"
)

// Code an interpreter payload executes that is built at run time cannot be
// read: Parse names it in Opaque. Code given as a literal is read instead.
func TestParse_Opaque(t *testing.T) {
	for _, c := range []struct {
		line, want string
	}{
		{`python3 -c "exec(''.join(chr(c) for c in [111,115]))"`, "exec() runs code built at run time"},
		{`python3 -c "import os; c=input(); os.system(c)"`, "system() runs a command built at run time"},
		{`node -e "eval(process.argv[1])" x`, "eval() runs code built at run time"},
		{`ruby -e "eval([99,97,116].pack('c*'))"`, "eval() runs code built at run time"},
		{`python3 -c "exec('import os' + x)"`, "exec() runs code built at run time"},
		{`python3 -c "print(eval('1+2'))"`, ""},
		{`python3 -c "import os; os.system('ls')"`, ""},
		{`python3 -c "import json,sys; print(json.load(sys.stdin))"`, ""},
	} {
		a := Parse(c.line)
		got := strings.Join(a.Opaque, "; ")
		if c.want == "" && got != "" || !strings.Contains(got, c.want) {
			t.Errorf("%s: opaque %q, want %q", c.line, got, c.want)
		}
	}
}
