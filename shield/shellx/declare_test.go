package shellx_test

import (
	"testing"

	"github.com/opx-dev/opx/shield/shellx"
)

// TestDeclareFlags: declare, typeset and local keep a value only with
// -x, -r and -g; any other flag (case changes, integers, arrays, name
// references) or a computed one leaves the variable Dynamic (review B8).
func TestDeclareFlags(t *testing.T) {
	cases := []struct {
		line    string
		dynamic bool
	}{
		{"declare -l x=/ETC/SHADOW; cat $x", true},
		{"declare -u x=/etc/shadow; cat $x", true},
		{"typeset -i x=1; cat $x", true},
		{"f() { local -n x=HOME; cat $x/.aws/credentials; }", true},
		{"declare -n r=HOME; cat $r/.aws/credentials", true},
		{"declare -n r=X; r=/etc/shadow; cat $X", true},
		{"declare -n r=X; Y=/etc; cat $Y/shadow", true},
		{"nameref r=HOME; cat $r", true},
		{"declare -a x=/etc; cat $x", true},
		{"declare $f x=/etc/passwd; cat $x", true},
		{"declare +l x=/etc; cat $x", true},
		{"read x; cat $x", true},
		{"mapfile x; cat $x", true},
		{"printf -v x /etc/shadow; cat $x", true},
		{"declare -x -r Y=/etc/hosts; cat $Y", false},
		{"declare -g Y=/etc/hosts; cat $Y", false},
		{"declare Y=/etc/hosts; cat $Y", false},
		{"local -r Y=/etc/hosts; cat $Y", false},
	}
	for _, tc := range cases {
		a := shellx.Parse(tc.line)
		last := a.Commands[len(a.Commands)-1]
		if last.Args[0].Text != "cat" || len(last.Args) < 2 {
			t.Fatalf("%q: last command %q", tc.line, last.Line)
		}
		if got := last.Args[1].Dynamic; got != tc.dynamic {
			t.Errorf("%q: cat's argument %q Dynamic = %v, want %v", tc.line, last.Args[1].Text, got, tc.dynamic)
		}
	}
}
