package shield_test

import (
	"context"
	"testing"
)

// TestRules16_NamespacedTopicPush: a branch under any plain namespace
// (api/, infra/, renovate/) is a topic pushed for review; a protected
// namespace (release/, prod/) asks by git-push-protected, the default
// branch, a forced push and two branches at once by git-push.
func TestRules16_NamespacedTopicPush(t *testing.T) {
	s := defaultShield(t)
	for line, want := range map[string]string{
		"git push origin api/policy-sorting":     "allow policy:git-push-topic",
		"git push -u origin HEAD:infra/wif-tags": "allow policy:git-push-topic",
		"git push origin renovate/grpc-1.x":      "allow policy:git-push-topic",
		"git push origin release/windows-arm64":  "escalate policy:git-push-protected",
		"git push origin HEAD:refs/heads/prod/x": "escalate policy:git-push-protected",
		"git push origin main":                   "escalate policy:git-push",
		"git push --force origin api/x":          "escalate policy:git-push",
		"git push origin api/x api/y":            "escalate policy:git-push",
	} {
		if v := final(s.Evaluate(context.Background(), command(line))); v.Decision+" "+v.Rule != want {
			t.Errorf("%s: %s %s (%s), want %s", line, v.Decision, v.Rule, v.Reason, want)
		}
	}
}
