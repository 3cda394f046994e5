package shellx_test

import (
	"encoding/base64"
	"testing"

	"github.com/opx-dev/opx/shield/shellx"
)

// benchLines are typical developer command lines.
var benchLines = []string{
	"go test ./...",
	"git status",
	"ps aux | grep node",
	"docker compose up -d",
	"npm run build",
	"git diff --stat HEAD~1",
	"ls -la src/",
	"cat README.md",
	"go build -o bin/app ./cmd/app && ./bin/app --version",
	"npm install --save-dev typescript@5",
	"python3 -m pytest -q tests/",
	"curl -s http://localhost:3000/api/health",
	"grep -rn 'TODO' --include='*.go' .",
	"make -j4 test 2>&1 | tee build.log",
	"git log --oneline -n 20",
	"find . -name '*.tmp' -delete",
	"kubectl get pods -n default -o wide",
	`git commit -m "fix: handle empty input in parser"`,
	"cd web && npm ci && npm run lint -- --fix",
	"for f in $(git diff --name-only | grep '\\.go$'); do gofmt -l \"$f\"; done; docker compose logs --tail=100 api | grep -i error | sort | uniq -c | sort -rn | head -20 > /tmp/errors.txt 2>&1 && echo done || echo failed; ls -la /tmp | wc -l",
}

// BenchmarkParse parses each typical line in turn; ns/op is per line.
func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		shellx.Parse(benchLines[i%len(benchLines)])
	}
}

// BenchmarkParse_Line reports each typical line on its own.
func BenchmarkParse_Line(b *testing.B) {
	for _, line := range benchLines {
		name := line
		if len(name) > 40 {
			name = name[:40]
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				shellx.Parse(line)
			}
		})
	}
}

// BenchmarkParse_Worst reports the worst shapes of TestParse_Worst.
func BenchmarkParse_Worst(b *testing.B) {
	for _, tc := range worstCases {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(tc.line)))
			for i := 0; i < b.N; i++ {
				shellx.Parse(tc.line)
			}
		})
	}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
