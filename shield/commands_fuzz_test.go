package shield

import (
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/opx-dev/opx/shield/shellx"
)

// checkFacts fails t unless every path in f is absolute and clean.
func checkFacts(t *testing.T, line string, f Facts) {
	t.Helper()
	ok := func(p string) bool {
		return path.IsAbs(p) && path.Clean(p) == p && !strings.Contains(p, inputWord)
	}
	for _, tx := range f.Texts {
		if strings.Contains(tx.Source, inputWord) {
			t.Errorf("%q: text source %q holds the input marker", line, tx.Source)
		}
	}
	for _, refs := range [][]Ref{f.Reads, f.Writes, f.Deletes} {
		for _, r := range refs {
			if !ok(r.Path) {
				t.Errorf("%q: path %q is not absolute and clean", line, r.Path)
			}
		}
	}
	for _, r := range f.Requests {
		for _, p := range r.Files {
			if !ok(p) {
				t.Errorf("%q: request file %q is not absolute and clean", line, p)
			}
		}
		if r.Host != strings.ToLower(r.Host) {
			t.Errorf("%q: host %q is not lower case", line, r.Host)
		}
	}
}

// FuzzCommandFacts: CommandFacts never panics, its paths are absolute and
// clean, and it is deterministic.
func FuzzCommandFacts(f *testing.F) {
	for _, c := range commandCases {
		f.Add(c.line)
	}
	for _, c := range reviewCases {
		f.Add(c.line)
	}
	for _, seed := range []string{
		"", " ", ";;", "$(", "`", "<<", "cd", "cd ''", "rm ''", "cat ~", "cat ~x/../..", "find", "find -exec", "xargs",
		"tar", "tar -C", "curl -d", "curl @", "git -C", "sudo", "env -C", "dd of=", "chmod", "ln -s", "cp a", "python3 -c",
		"socat", "nc -l", "ssh", "scp a", "rsync a", "docker run -v", "sed -i", "awk", "jq --arg", "http", "dig @",
		"cat $(ls $(ls $(ls)))", "x=$(curl a); $x", "a | b | c | d | xargs -I% cp % %/%",
	} {
		f.Add(seed)
	}
	s := testShield()
	f.Fuzz(func(t *testing.T, line string) {
		if len(line) > 1<<14 {
			return
		}
		a := s.CommandFacts(line)
		checkFacts(t, line, a)
		if b := s.CommandFacts(line); !reflect.DeepEqual(a, b) {
			t.Errorf("%q: not deterministic", line)
		}
	})
}

// TestCommandFacts_Bounded: hostile shapes finish and stay small.
func TestCommandFacts_Bounded(t *testing.T) {
	s := testShield()
	for _, line := range []string{
		strings.Repeat("$(", 10000),
		strings.Repeat("a ", 100000),
		strings.Repeat("cat x | ", 5000) + "sh",
		strings.Repeat("cd a && ", 5000) + "rm -rf b",
		"cat " + strings.Repeat("../", 20000) + "etc/passwd",
		strings.Repeat("echo a; ", 20000),
		"curl " + strings.Repeat("-d @x ", 20000) + "https://x.io",
	} {
		f := s.CommandFacts(line)
		checkFacts(t, line[:min(len(line), 40)], f)
		if n := len(f.Reads) + len(f.Writes) + len(f.Deletes) + len(f.Runs) + len(f.Requests); n > 200000 {
			t.Errorf("%.40q: %d facts", line, n)
		}
	}
}

// benchLines are typical developer commands.
var benchLines = []string{
	"go test ./...",
	"gofmt -w .",
	"git status",
	"git diff HEAD~1 -- src/main.go",
	"ps aux | grep node",
	"cd frontend && npm ci && npm run build",
	"curl -s http://localhost:3100/api/status | jq .",
	"find . -name '*.go' -not -path './vendor/*' | xargs grep -n TODO",
	"docker compose up -d",
	"git add -A && git commit -m 'fix: handle empty input' && git push origin feature/x",
	"cat README.md | head -50",
	"python3 -m pytest -q tests/ 2>&1 | tail -20",
	"tar czf dist.tgz dist && ls -la dist.tgz",
	"sed -i 's/v1.2.3/v1.2.4/' version.go",
	"kubectl get pods -n prod -o wide",
}

// BenchmarkCommandFacts times CommandFacts (parsing included) on
// typical developer lines and reports the median per line (p50-ns);
// BenchmarkCommandFacts_Model times the model alone, on parsed lines.
func BenchmarkCommandFacts(b *testing.B) {
	s := testShield()
	b.ReportAllocs()
	var times []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		s.CommandFacts(benchLines[i%len(benchLines)])
		times = append(times, time.Since(t0))
	}
	slices.Sort(times)
	if len(times) > 0 {
		b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
	}
}

func BenchmarkCommandFacts_Model(b *testing.B) {
	s := testShield()
	parsed := make([]shellx.Analysis, len(benchLines))
	for i, l := range benchLines {
		parsed[i] = shellx.Parse(l)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.analysisFacts(&parsed[i%len(parsed)], "/ws", 0)
	}
}
