package main_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/opx-dev/opx/engine/config"
)

// TestREADME_SampleCommands runs every command the README shows on the
// committed ledgers (the generated sample, the broken ones, the recorded
// demo), in the README's order, with the built binary: each must exit as
// its comment says (4 where it begins "exit 4", else 0). Paths under /tmp
// become the test's own. A README command that stops working on the
// committed fixtures (a regenerated sample, a renamed flag, a rerun that
// no longer matches the recorded demo) fails here.
func TestREADME_SampleCommands(t *testing.T) {
	t.Parallel()
	bin := buildOpx(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	lines := readmeCommands(t, filepath.Join(root, "README.md"))
	if len(lines) < 10 {
		t.Fatalf("found %d fixture commands in the README", len(lines))
	}
	repl := strings.NewReplacer(
		"/tmp/opx-sample.db", filepath.Join(tmp, "sample.db"),
		"/tmp/opx-demo.db", filepath.Join(tmp, "demo.db"),
		"/tmp/report.html", filepath.Join(tmp, "report.html"),
		"/tmp/opx-sample-2.jsonl", filepath.Join(tmp, "export.jsonl"),
	)
	for _, line := range lines {
		cmdline, comment, _ := strings.Cut(line, "  #")
		want := 0
		if strings.HasPrefix(strings.TrimSpace(comment), "exit 4") {
			want = 4
		}
		args := shellWords(t, repl.Replace(cmdline))
		if args[0] == "go" { // go run ./cli/opx ...
			args = args[3:]
		} else {
			args = args[1:]
		}
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if strings.Contains(line, "--rerun") && !sandboxRequired() {
				t.Skip("a rerun needs the agent's sandbox")
			}
			out, errOut, code := runOpxIn(t, bin, root, args...)
			if code != want {
				t.Fatalf("README: %s\nexit %d, want %d\n%s%s", line, code, want, clipOutput(out), errOut)
			}
		})
	}
}

// readmeCommands returns the README's shell lines that run opx on the
// committed fixtures or on the imported sample.
func readmeCommands(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	inBlock := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock || !(strings.HasPrefix(l, "opx ") || strings.HasPrefix(l, "go run ./cli/opx ")) {
			continue
		}
		if strings.Contains(l, "fixtures/ledgers/") || strings.Contains(l, "fixtures/recorded/") || strings.Contains(l, "/tmp/opx-sample") || strings.Contains(l, "/tmp/opx-demo") {
			out = append(out, l)
		}
	}
	return out
}

// shellWords splits a README command line as sh would, for the quoting
// the README uses (double and single quotes, no escapes or expansions).
func shellWords(t *testing.T, s string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '$' || r == '`' || r == '\\' || r == '|' || r == ';' || r == '&':
			t.Fatalf("README line %q needs a real shell (%q)", s, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

func clipOutput(s string) string {
	if len(s) > 4000 {
		return s[:2000] + "\n...\n" + s[len(s)-2000:]
	}
	return s
}

// TestREADME_SampleSize: the number of entries the README gives for the
// committed sample is the sample's (it said 1,176 of a 1,239-entry sample
// once the generator had grown): a regenerated sample fails here until the
// README says its size.
func TestREADME_SampleSize(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`committed sample \(([0-9,]+) entries`).FindSubmatch(readme)
	if m == nil {
		t.Fatal(`the README does not say "committed sample (N entries"`)
	}
	said, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "fixtures", "ledgers", "sample.jsonl.zst"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := zstd.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := 0
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), `{"data":`) && strings.Contains(sc.Text(), `"seq":`) {
			entries++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if said != entries {
		t.Errorf("the README says the sample has %d entries; it has %d", said, entries)
	}
}

// TestREADME_ProviderConfig: the README's "Connect a real model" YAML
// blocks are configurations the engine accepts (config.Parse, as it loads
// .opx/config.yaml: unknown keys refused, every provider checked), one
// for an OpenAI-compatible endpoint and one for Anthropic, each naming
// the variable that holds its key.
func TestREADME_ProviderConfig(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n### Connect a real model\n")
	if !ok {
		t.Fatal(`the README has no "### Connect a real model" section`)
	}
	if i := strings.Index(section, "\n#"); i >= 0 {
		section = section[:i]
	}
	want := map[string]string{config.ProviderOpenAI: "OPENAI_API_KEY", config.ProviderAnthropic: "ANTHROPIC_API_KEY"}
	got := map[string]string{}
	for _, block := range strings.Split(section, "```yaml\n")[1:] {
		text, _, ok := strings.Cut(block, "```")
		if !ok {
			t.Fatalf("unclosed yaml block: %q", block)
		}
		c, err := config.Parse([]byte(text))
		if err != nil {
			t.Errorf("the README's provider configuration does not load: %v\n%s", err, text)
			continue
		}
		got[c.Provider.Kind] = c.Provider.APIKeyEnv
	}
	if len(got) != len(want) {
		t.Fatalf("provider kinds shown %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: api_key_env %q, want %q", k, got[k], v)
		}
	}
}
