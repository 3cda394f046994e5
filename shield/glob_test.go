package shield

import (
	"strings"
	"testing"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"*.pem", "certs/server.pem", true},
		{"*.pem", "server.pem.bak", false},
		{"/home/u/.ssh/**", "/home/u/.ssh/id_rsa", true},
		{"/home/u/.ssh/**", "/home/u/.ssh", true},
		{"/home/u/.ssh/**", "/home/u/.sshx/id", false},
		{"**/.git/hooks/**", "/w/.git/hooks/pre-commit", true},
		{"**/.git/hooks/**", "/w/sub/.git/hooks/x/y", true},
		{"**/.env", "/w/.env", true},
		{"**/.env", "/w/a/.env.local", false},
		{"/w/src/*.go", "/w/src/a.go", true},
		{"/w/src/*.go", "/w/src/sub/a.go", false},
		{"/w/**/*.go", "/w/src/sub/a.go", true},
		{"/w/**", "/w", true},
		{"/w/**", "/other", false},
	}
	for _, tt := range tests {
		if got := matchGlob(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchGlob(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func TestOverlap(t *testing.T) {
	tests := []struct {
		ref, rule string
		want      bool
	}{
		{"/home/u/.ssh/*", "/home/u/.ssh/**", true},
		{"/home/u/*/id_rsa", "/home/u/.ssh/**", false}, // the shell's * skips dot names
		{"/home/u/.*/id_rsa", "/home/u/.ssh/**", true},
		{"/home/u/.a*/cred*", "/home/u/.aws/**", true},
		{"/home/u/.a*/cred*", "/home/u/.azure/**", true},
		{"/home/u/.b*/cred*", "/home/u/.aws/**", false},
		{"/etc/sha*", "/etc/shadow", true},
		{"/etc/pa*", "/etc/shadow", false},
		{"/etc/*/x", "/etc/shadow", false},
		{"/w/**/*.env", "/w/.opx/**", false}, // globstar skips dot directories too
		{"/w/**/*.env", "/w/sub/**", true},
		{"/w/src/*.go", "**/.git/hooks/**", false},
		{"/*", "/etc/shadow", false},
		{"/**", "/etc/shadow", true},
	}
	for _, tt := range tests {
		if got := overlap(splitPath(tt.ref), splitPath(tt.rule)); got != tt.want {
			t.Errorf("overlap(%q, %q) = %v, want %v", tt.ref, tt.rule, got, tt.want)
		}
	}
}

// TestOverlap_Bounded: a pattern of many "**" and "*" against a long path
// ends within the step budget (and answers "could overlap").
func TestOverlap_Bounded(t *testing.T) {
	ref := "/" + strings.Repeat("**/x*/", 200) + "y"
	rule := "/" + strings.Repeat("a/", 500) + "**/z"
	_ = overlap(splitPath(ref), splitPath(rule))
}

func TestReaches(t *testing.T) {
	const state = "/h/.local/state/opx/abc"
	tests := []struct {
		r         Ref
		at, above bool
	}{
		{Ref{Path: state + "/ledger.db"}, true, false},
		{Ref{Path: "/h/.local/state"}, false, true},
		{Ref{Path: "/h", Tree: true}, true, true},
		{Ref{Path: "/h/.local/state/opx/*/ledger.db", Glob: true}, true, false},
		{Ref{Path: "/h/.local/*", Glob: true}, false, true},
		{Ref{Path: "/h/.local/*", Glob: true, Tree: true}, true, true},
		{Ref{Path: "/h/*", Glob: true}, false, false},
		{Ref{Path: "/*", Glob: true}, false, true}, // a listing of / (reads pass: only not recursive)
	}
	for _, tt := range tests {
		if at, above := reaches(&tt.r, state); at != tt.at || above != tt.above {
			t.Errorf("reaches(%+v) = %v, %v; want %v, %v", tt.r, at, above, tt.at, tt.above)
		}
	}
}
