package shield

import (
	"os"
	"regexp"
	"strconv"
	"testing"
)

// TestRulesVersion_MatchesDocs holds RulesVersion to the newest "rules N"
// docs/shield-rules.md names. A pass that documents its rules under a new
// version and forgets the constant leaves reruns unable to say that
// verdicts changed because the rules did (session 15 did exactly that).
func TestRulesVersion_MatchesDocs(t *testing.T) {
	b, err := os.ReadFile("../docs/shield-rules.md")
	if err != nil {
		t.Fatal(err)
	}
	newest := 0
	for _, m := range regexp.MustCompile(`\brules (\d+)\b`).FindAllSubmatch(b, -1) {
		if n, _ := strconv.Atoi(string(m[1])); n > newest {
			newest = n
		}
	}
	if newest == 0 {
		t.Fatal(`docs/shield-rules.md names no "rules N"`)
	}
	if got := strconv.Itoa(newest); got != RulesVersion {
		t.Errorf("docs/shield-rules.md documents rules %s, RulesVersion is %s: bump the constant (and its history in version.go) with the rules", got, RulesVersion)
	}
}
