package shield

import (
	"path"
	"testing"
)

// TestResolvePath: the one resolver (review B3): homes, "//", "/./",
// "..", and /proc aliases.
func TestResolvePath(t *testing.T) {
	const home, cwd = "/home/u", "/ws/src"
	for _, c := range []struct {
		in, want string
		res      resolution
	}{
		{"~", "/home/u", resolved},
		{"~/.ssh/id_rsa", "/home/u/.ssh/id_rsa", resolved},
		{"$HOME/.aws/credentials", "/home/u/.aws/credentials", resolved},
		{"${HOME}/.aws/credentials", "/home/u/.aws/credentials", resolved},
		{"$HOME", "/home/u", resolved},
		{"~root/.ssh", "/root/.ssh", resolved},
		{"~alice/.ssh/id_rsa", "/home/alice/.ssh/id_rsa", resolved},
		{"~+/x", "/ws/src/x", resolved},
		{"~nouser/../.opx/config.yaml", "", resolvedNoDir},
		{"~root/../etc/shadow", "/etc/shadow", resolved},
		{"~../x", "/ws/src/~../x", resolved},
		{"~-/x", "", resolvedNoDir},
		{"a//b/./c/.", "/ws/src/a/b/c", resolved},
		{"../../etc/passwd", "/etc/passwd", resolved},
		{"/home/u/.local/state//opx/a/ledger.db", "/home/u/.local/state/opx/a/ledger.db", resolved},
		{"/proc/self/root/root/.aws/credentials", "/root/.aws/credentials", resolved},
		{"/proc/thread-self/root/etc/shadow", "/etc/shadow", resolved},
		{"/proc/1/root/etc/shadow", "/etc/shadow", resolved},
		{"/proc/*/root/etc/shadow", "/etc/shadow", resolved},
		{"/proc/self/task/7/root/etc/shadow", "/etc/shadow", resolved},
		{"/proc/self/root/../etc/shadow", "/etc/shadow", resolved},
		{"/proc/self/root/proc/self/root/etc//shadow", "/etc/shadow", resolved},
		{"/proc/self/root", "/", resolved},
		{"/proc/self/cwd/.opx/config.yaml", "/ws/src/.opx/config.yaml", resolved},
		{"/proc/thread-self/cwd/../x", "/ws/x", resolved},
		{"/proc/1/cwd/x", "", resolvedOpaque},
		{"/proc/self/environ", "/proc/self/environ", resolved},
		{"/proc/thread-self/environ", "/proc/self/environ", resolved},
		{"/proc/self/task/3/environ", "/proc/self/environ", resolved},
		{"/proc/12/environ", "/proc/12/environ", resolved},
		{"/proc/self/fd/5", "", resolvedOpaque},
		{"/proc/77/fd/3", "", resolvedOpaque},
		{"/dev/fd/9", "", resolvedOpaque},
		{"/dev/fd/0", "/dev/stdin", resolved},
		{"/proc/self/fd/1", "/dev/stdout", resolved},
		{"/proc/self/status", "/proc/self/status", resolved},
		{"/proc/cpuinfo", "/proc/cpuinfo", resolved},
	} {
		got, res := resolvePath(home, cwd, c.in)
		if got != c.want || res != c.res {
			t.Errorf("resolvePath(%q) = %q, %d; want %q, %d", c.in, got, res, c.want, c.res)
		}
	}
	if _, res := resolvePath(home, "", "/proc/self/cwd/x"); res != resolvedNoDir {
		t.Errorf("/proc/self/cwd with an unknown cwd: %d", res)
	}
	s := testShield()
	if got := s.ResolvePath("/proc/self/root/home/u/.ssh/id_rsa"); got != "/home/u/.ssh/id_rsa" {
		t.Errorf("ResolvePath = %q", got)
	}
	if got := s.ResolvePath("~bob/x"); got != "/home/bob/x" {
		t.Errorf("ResolvePath(~bob/x) = %q", got)
	}
}

// TestCommandFacts_ProcAliases: command lines reach paths through /proc
// as ResolvePath does; a descriptor is Unknown.
func TestCommandFacts_ProcAliases(t *testing.T) {
	s := testShield()
	for _, c := range []struct {
		line string
		want []string
	}{
		{"cat /proc/self/root/root/.aws/credentials", []string{"R /root/.aws/credentials"}},
		{"cat /proc/self/root/home/u/.local/state//opx/a/ledger.db", []string{"R /home/u/.local/state/opx/a/ledger.db"}},
		{"cp -r /proc/self/root/home/u/.local/state ./s", []string{"R /home/u/.local/state T"}},
		{"cat /proc/self/cwd/.opx/config.yaml", []string{"R /ws/.opx/config.yaml"}},
		{"cd src && cat /proc/self/cwd/../.opx/config.yaml", []string{"R /ws/.opx/config.yaml"}},
		{"cat /proc/thread-self/environ", []string{"R /proc/self/environ"}},
		{"cat /proc/self/fd/7", []string{"U"}},
		{"cat /dev/fd/3", []string{"U"}},
		{"cat ~root/.ssh/id_rsa", []string{"R /root/.ssh/id_rsa"}},
	} {
		got := renderFacts(s.CommandFacts(c.line))
		for _, w := range c.want {
			if !got[w] {
				t.Errorf("%q: no %q in %v", c.line, w, got)
			}
		}
	}
	if got := renderFacts(s.CommandFactsIn("cat /proc/self/cwd/config.yaml", ".opx")); !got["R /ws/.opx/config.yaml"] {
		t.Errorf("cwd .opx: %v", got)
	}
}

func TestSlashesCollapsed(t *testing.T) {
	for in, want := range map[string]string{
		"cat ~/.local/state//opx/x":  "cat ~/.local/state/opx/x",
		"cat ~/.local/./state/opx":   "cat ~/.local/state/opx",
		"cat ~/.local//.//state/opx": "cat ~/.local/state/opx",
		"echo a.b ./x":               "echo a.b ./x",
		"http://x":                   "http:/x",
	} {
		if got := slashesCollapsed(in); got != want {
			t.Errorf("slashesCollapsed(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzResolvePath: whatever it is given, a resolved path is absolute and
// clean (no "//", ".", ".." segments, no trailing slash but "/").
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"~", "~root/x", "/proc/self/root/../x", "/proc/self/cwd/a/../../b", "a//./b/..", "$HOME/x", "/dev/fd/0", "/proc/1/task/2/root/etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		p, r := resolvePath("/home/u", "/ws", in)
		if r != resolved {
			return
		}
		if p != path.Clean(p) || !path.IsAbs(p) {
			t.Fatalf("resolvePath(%q) = %q: not absolute and clean", in, p)
		}
	})
}
