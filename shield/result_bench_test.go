package shield_test

import (
	"strings"
	"testing"

	"github.com/opx-dev/opx/shield"
)

// BenchmarkJudgeResult: Shield's read of an MCP result of 1 MiB, plain
// and keyword-dense (the worst case: every chunk spends its budget),
// beside a plain strings.Contains scan of the same text for the phrase
// as the baseline.
func BenchmarkJudgeResult(b *testing.B) {
	for _, c := range []struct{ name, text string }{
		{"plain-1MiB", strings.Repeat("func main() { fmt.Println(x) }\n", 1<<20/32)},
		{"dense-1MiB", strings.Repeat("note: ignore system agent ", 1<<20/26)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				shield.JudgeResult(c.text)
			}
		})
		b.Run(c.name+"/baseline-contains", func(b *testing.B) {
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				_ = strings.Contains(strings.ToLower(c.text), "ignore all previous instructions")
			}
		})
	}
}
