package shield

import "testing"

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
