package manifest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

var fuzzPaths = []string{"go.mod", "go.work", "go.sum", "x.go", "package.json", "package-lock.json", "yarn.lock",
	"pnpm-lock.yaml", "Cargo.toml", "Cargo.lock", ".cargo/config.toml", "requirements.txt", "pyproject.toml", "Pipfile",
	"Pipfile.lock", "poetry.lock", "uv.lock", "setup.cfg", "setup.py", "Gemfile", "Gemfile.lock", ".npmrc", ".yarnrc.yml",
	".yarnrc", "pip.conf", ".pypirc", ".gemrc", ".bundle/config", ".pre-commit-config.yaml", "build.rs"}

// FuzzDiff: Diff never panics, answers quickly, and returns few, short,
// one-line changes whatever the bytes.
func FuzzDiff(f *testing.F) {
	f.Add(byte(0), []byte(goModA), []byte(goModA+"replace a.com/b => ../b\n"))
	f.Add(byte(4), []byte(pkgJSON), []byte(`{"scripts":{"postinstall":"x"},"overrides":{"a":{"b":{"c":"git:x"}}}}`))
	f.Add(byte(5), []byte(pkgLock), []byte(strings.Replace(pkgLock, "npmjs.org", "evil.example", 1)))
	f.Add(byte(6), []byte(yarnV1), []byte(yarnBerry))
	f.Add(byte(7), []byte(pnpmLockA), []byte("packages:\n  a: &x {resolution: *x}\n"))
	f.Add(byte(8), []byte(cargoToml), []byte(cargoToml+"[patch.crates-io]\nx={path=\"y\"}\n"))
	f.Add(byte(11), []byte("a==1\n"), []byte("-i x\na @ git+y\\\n --hash=sha256:1\n"))
	f.Add(byte(12), []byte(pyproject), []byte(pyproject))
	f.Add(byte(19), []byte(gemfile), []byte(gemfile+"gem 'x', git: 'y'\n"))
	f.Add(byte(20), []byte(gemLock), []byte("GIT\n  remote: x\n"))
	f.Fuzz(func(t *testing.T, which byte, before, after []byte) {
		p := fuzzPaths[int(which)%len(fuzzPaths)]
		b := before
		if which >= 128 {
			b = nil
		}
		start := time.Now()
		cs, err := Diff(p, b, after)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Diff(%s) took %v", p, d)
		}
		if err != nil && cs != nil {
			t.Fatalf("changes and an error")
		}
		if len(cs) > maxChanges {
			t.Fatalf("%d changes", len(cs))
		}
		for _, c := range cs {
			if len(c.Key) > 3*maxValue || len(c.Detail) > 4*maxValue || strings.ContainsAny(c.Key+c.Detail, "\n\r\x00") {
				t.Fatalf("bad change %q", c)
			}
			if c.Kind != KindSource && c.Kind != KindRuns && c.Kind != KindChecksum {
				t.Fatalf("bad kind %q", c.Kind)
			}
		}
	})
}

func benchLock() []byte {
	var b strings.Builder
	b.WriteString(`{"name":"app","lockfileVersion":3,"requires":true,"packages":{"":{"name":"app","version":"1.0.0"}`)
	for i := 0; b.Len() < 20_000; i++ {
		fmt.Fprintf(&b, `,"node_modules/pkg-%d":{"version":"1.%d.0","resolved":"https://registry.npmjs.org/pkg-%d/-/pkg-%d-1.%d.0.tgz","integrity":"sha512-%040d","dev":true}`, i, i, i, i, i, i)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

func benchGoMod() []byte {
	var b strings.Builder
	b.WriteString("module example.com/app\n\ngo 1.22\n\nrequire (\n")
	for i := 0; b.Len() < 2_800; i++ {
		fmt.Fprintf(&b, "\tgithub.com/org%d/mod%d v1.%d.0\n", i, i, i)
	}
	b.WriteString(")\n\nreplace github.com/org0/mod0 => ../mod0\n")
	return []byte(b.String())
}

// BenchmarkDiff: Diff of a file against itself with one edit, beside
// json.Unmarshal of the same bytes into any; "x-unmarshal" is the ratio.
func BenchmarkDiff(b *testing.B) {
	for _, c := range []struct {
		name, path string
		data       []byte
	}{
		{"package-lock-20KB", "package-lock.json", benchLock()},
		{"go.mod-3KB", "go.mod", benchGoMod()},
	} {
		after := []byte(strings.Replace(string(c.data), "1.1.0", "1.1.1", 1))
		var base time.Duration
		b.Run(c.name+"/json-baseline", func(b *testing.B) {
			js := c.data
			if c.path == "go.mod" {
				js, _ = json.Marshal(map[string]string{"x": string(c.data)})
			}
			b.SetBytes(int64(len(js)))
			start := time.Now()
			for i := 0; i < b.N; i++ {
				var v any
				if err := json.Unmarshal(js, &v); err != nil {
					b.Fatal(err)
				}
			}
			base = time.Since(start) / time.Duration(b.N)
		})
		b.Run(c.name+"/diff", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := Diff(c.path, c.data, after); err != nil {
					b.Fatal(err)
				}
			}
			per := time.Since(start) / time.Duration(b.N)
			if base > 0 {
				b.ReportMetric(float64(per)/float64(base), "x-unmarshal")
			}
		})
	}
}
