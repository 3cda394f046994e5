package manifest

import (
	"strings"
	"testing"
	"time"
)

// TestDiff_Pathological: deep nesting, long lines, many aliases stay
// bounded in time (and end in an answer or an error, not a crash).
func TestDiff_Pathological(t *testing.T) {
	n := MaxBytes/2 - 16
	for _, c := range []struct{ path, data string }{
		{"Cargo.toml", "a = " + strings.Repeat("[", n)},
		{"pyproject.toml", "a = " + strings.Repeat("{b=", n/3)},
		{"package.json", strings.Repeat("[", n)},
		{"package-lock.json", `{"dependencies":` + strings.Repeat(`{"a":{"dependencies":`, n/25)},
		{"pnpm-lock.yaml", strings.Repeat("- ", n)},
		{".yarnrc.yml", "a: &a [" + strings.Repeat("*a,", n/3) + "]"},
		{"yarn.lock", strings.Repeat("a@1:\n  version \"1\"\n", n/20)},
		{"Gemfile", strings.Repeat("gem 'a',\n", n/10)},
		{"requirements.txt", strings.Repeat("a==1 \\\n", n/8)},
		{"go.mod", "module a\n" + strings.Repeat("require a.com/b v1.0.0\n", n/24)},
		{"setup.cfg", "[options]\ninstall_requires =\n" + strings.Repeat("  a\n", n/4)},
	} {
		start := time.Now()
		cs, err := Diff(c.path, nil, []byte(c.data))
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: %v", c.path, d)
		}
		t.Logf("%s: %d changes, err %v, %v", c.path, len(cs), err, time.Since(start))
	}
}
