package shield

import (
	"fmt"
	"strings"
)

// Parity between routes (rules 11, issue 27 pass 8). A text is judged by
// what it says, not by the route that carries it: a commit message given
// to the git_commit tool is judged as `git commit -m` judges it, and the
// message of `git commit -m` is searched for secrets as the tool's is.
// TestParity_* hold every route of a text to the same decision class.

// commitMessageEvades says how a commit message evades the repository's
// audit ("rule reason"), or "": CI told to skip it, a conversation turn or
// an approval forged into it. gitEvades and commitToolEvasion share it.
func commitMessageEvades(msg string) string {
	switch {
	case skipCIRe.MatchString(msg):
		return "evasion:skip-ci tells CI to skip the commit"
	case forgedTurnRe.MatchString(msg):
		return "evasion:forged-turn writes a conversation turn (someone's consent) into the commit message"
	case forgedApprovalRe.MatchString(msg):
		return "evasion:forged-turn writes an approval into the commit message (" + clipText(forgedApprovalRe.FindString(msg), 60) + "): a later reader takes it for a review that took place"
	}
	return ""
}

// commitToolEvasion is repoEvasion's judgement of the git_commit tool's
// message (Text "commit message"): the same as of `git commit -m`.
func commitToolEvasion(f *Facts, j *judgement) bool {
	for _, t := range f.Texts {
		if t.Source != "commit message" {
			continue
		}
		if why := commitMessageEvades(clip(t.Body, maxTextJudged)); why != "" {
			i := strings.IndexByte(why, ' ')
			j.escalate(why[:i], "the commit message %s", why[i+1:])
			return true
		}
	}
	return false
}

// commitMessageArgs returns the messages a git command line gives with
// -m, --message or -m<text> (the route of `git commit -m`), for the
// checks the git_commit tool's message gets.
func commitMessageArgs(f *Facts) []string {
	var out []string
	for i := range f.Runs {
		r := &f.Runs[i]
		if r.Name != "git" {
			continue
		}
		args := r.Argv[min(1, len(r.Argv)):]
		commit := false
		for k := 0; k < len(args); k++ {
			x := args[k]
			switch {
			case !commit && (x == "-c" || x == "-C" || x == "--git-dir" || x == "--work-tree"):
				k++
			case !commit && (x == "commit" || x == "tag" || x == "merge"):
				commit = true
			case !commit:
			case (x == "-m" || x == "--message" || shortCluster(x, 'm')) && k+1 < len(args):
				out = append(out, args[k+1])
				k++
			case strings.HasPrefix(x, "--message="):
				out = append(out, x[len("--message="):])
			case strings.HasPrefix(x, "-m") && len(x) > 2 && !strings.HasPrefix(x, "--"):
				out = append(out, x[2:])
			}
		}
	}
	return out
}

// contactEmailRe and contactPhoneRe find contact details in a note: an address, an
// international number (+country, then groups of digits).
var (
	contactEmailRe = mustRx(`\b[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,4}\b`)
	contactPhoneRe = mustRx(`\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,5}`)
)

// personalContacts says what people's contact details text holds (an
// address with a phone number, two numbers, five addresses or more), or
// "". An address alone (a team's, a maintainer's, a co-author's) is a
// fact, not a customer's record.
func personalContacts(text string) string {
	text = clip(text, maxSecretScan)
	emails := map[string]bool{}
	for _, e := range contactEmailRe.FindAllString(text, 16) {
		emails[strings.ToLower(e)] = true
	}
	phones := 0
	for _, p := range contactPhoneRe.FindAllString(text, 16) {
		digits := 0
		for _, c := range p {
			if '0' <= c && c <= '9' {
				digits++
			}
		}
		if digits >= 8 {
			phones++
		}
	}
	switch {
	case len(emails) >= 1 && phones >= 1, phones >= 2, len(emails) >= 5:
		return fmt.Sprintf("contact details (%d addresses, %d phone numbers)", len(emails), phones)
	}
	return ""
}

// shortCluster reports whether x is a cluster of short flags ending in
// last (-am, -sam: the last takes the next argument). Rules 12.
func shortCluster(x string, last byte) bool {
	if len(x) < 3 || x[0] != '-' || x[1] == '-' || x[len(x)-1] != last {
		return false
	}
	for i := 1; i < len(x); i++ {
		if c := x[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
