package shield

import (
	"bufio"
	"encoding/json"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
	"testing"
)

// prefilterTexts are the texts of every Shield corpus (their string
// values, whole and line by line).
func prefilterTexts(t *testing.T) []string {
	t.Helper()
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			out = append(out, v)
			if strings.Contains(v, "\\n") || strings.Contains(v, "\n") {
				out = append(out, strings.Split(v, "\n")...)
			}
		case map[string]any:
			for _, x := range v {
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	root := filepath.Join("..", "fixtures", "shield")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var v any
			if json.Unmarshal(sc.Bytes(), &v) == nil {
				walk(v)
			}
		}
		return sc.Err()
	})
	if err != nil {
		t.Fatal(err)
	}
	if os.Getenv("OPX_RX_FULL") == "1" {
		return out // every text (minutes)
	}
	// distinct, at most 400 bytes, one in stride (a test of seconds)
	seen := map[string]bool{}
	var keep []string
	for _, s := range out {
		if len(s) <= 400 && !seen[s] {
			seen[s] = true
			keep = append(keep, s)
		}
	}
	sort.Strings(keep)
	stride := max(1, len(keep)/1500)
	var sample []string
	for i := 0; i < len(keep); i += stride {
		sample = append(sample, keep[i])
	}
	if len(sample) < 1000 {
		t.Fatalf("only %d corpus texts", len(sample))
	}
	return sample
}

// TestRx_PrefilterNeverRefusesAMatch: whatever an expression matches in
// a sample of the corpora's texts (and in each in upper and lower
// case), its prefilter lets through. OPX_RX_FULL=1 runs it over all of
// them, every text whole and line by line (minutes).
func TestRx_PrefilterNeverRefusesAMatch(t *testing.T) {
	texts := prefilterTexts(t)
	filtered, matches := 0, 0
	for _, r := range allRx {
		if r.pre != nil {
			filtered++
		}
		for _, s := range texts {
			for _, s := range []string{s, strings.ToUpper(s), strings.ToLower(s)} {
				if r.Regexp.MatchString(s) {
					matches++
					if !r.may(s) {
						t.Fatalf("%s: the prefilter refuses %q, which it matches", r, s)
					}
				}
			}
		}
	}
	t.Logf("%d of %d expressions prefiltered; %d matches checked", filtered, len(allRx), matches)
	if filtered < len(allRx)*3/4 {
		t.Errorf("only %d of %d expressions have a prefilter", filtered, len(allRx))
	}
}

// TestRx_Methods: each prefiltered method answers as regexp's.
func TestRx_Methods(t *testing.T) {
	r := mustRx(`(?i)\b(?:post|put)(async|json)?\s*\(|send_?mail`)
	for _, s := range []string{"", "x", "requests.POST(url)", "requests.putJSON (", "sendmail", "SEND_MAIL x", "nothing here", "pöst(", "\u212a"} {
		if r.MatchString(s) != r.Regexp.MatchString(s) || r.FindString(s) != r.Regexp.FindString(s) ||
			len(r.FindAllStringSubmatch(s, -1)) != len(r.Regexp.FindAllStringSubmatch(s, -1)) ||
			r.ReplaceAllString(s, "X") != r.Regexp.ReplaceAllString(s, "X") {
			t.Errorf("%q: rx and regexp differ", s)
		}
	}
	if r.may("nothing here") {
		t.Error("a line with none of the words passes the prefilter")
	}
	// conjunctive: each alternative needs one literal of each of its sets
	c := mustRx(`(?i)\bto\s+'[a-z0-9]+://|upload\w*\(`)
	for s, want := range map[string]bool{"token := https://x": false, "copy to 's3://b'": true, "upload(": true, "uploads": false} {
		if got := c.may(s); got != want {
			t.Errorf("%q: may %v, want %v", s, got, want)
		}
	}
}

// TestRx_Required checks the analysis on shapes and on random strings
// drawn from a small alphabet (so that they match often).
func TestRx_Required(t *testing.T) {
	exprs := []string{
		`(?i)post|put|patch`, `(?i)[.:>]\s*(?:post|put)(?:async|_?json)?\s*[(!]`, `ab?c`, `a(?:b|c)d`, `\bx{2,}y`,
		`(?i)k`, `(?:ab)*c`, `a|b*`, `(?i)[a-c]x`, `^\s*$`, `a+b`, `(ab|cd)(ef|gh)?ij`, `[^a]b`, `(?s)a.b`, `x?`,
		`(?i)\bto\s+'[a-z]+://|pu(?:t|sh)\(`, `a\w*b|c(?:d|e)+f`, `(a|b)(c|d)\s*(e|f)`,
	}
	alphabet := []byte("abcdefghijxyzKPOSTputk.:>( _!'/sh\n")
	rng := rand.New(rand.NewSource(1))
	for _, e := range exprs {
		r := mustRx(e)
		re := regexp.MustCompile(e)
		for n := 0; n < 20000; n++ {
			b := make([]byte, rng.Intn(12))
			for i := range b {
				b[i] = alphabet[rng.Intn(len(alphabet))]
			}
			if s := string(b); re.MatchString(s) && !r.may(s) {
				t.Fatalf("%s: prefilter refuses %q", e, s)
			}
		}
	}
	for _, c := range []struct {
		expr string
		lits string // "" when none
	}{
		{`(?i)post|put`, "post put"},
		{`a(?:b|c)d`, "abd acd"},
		{`ab?c`, "abc ac"},
		{`a|b*`, ""},
		{`x?`, ""},
		{`\w+foo\w*`, "foo"},
	} {
		re, _ := syntax.Parse(c.expr, syntax.Perl)
		lits, ok := required(re.Simplify())
		got := ""
		if ok {
			got = strings.Join(lits, " ")
		}
		if got != c.lits {
			t.Errorf("%s: required %q, want %q", c.expr, got, c.lits)
		}
	}
}
