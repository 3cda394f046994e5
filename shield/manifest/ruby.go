package manifest

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// rubyQuoted returns the first quoted string in s, and whether s's quotes
// are balanced.
func rubyQuoted(s string) (first string, ok bool) {
	var q byte
	start := -1
	found := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == '\\':
			i++
		case q != 0 && c == q:
			if !found {
				first, found = s[start:i], true
			}
			q = 0
		case q == 0 && (c == '"' || c == '\''):
			q, start = c, i+1
		case q == 0 && c == '#':
			return first, true
		}
	}
	return first, q == 0
}

// rubyStrip drops a trailing comment outside quotes.
func rubyStrip(s string) string {
	var q byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0 && c == '\\':
			i++
		case q != 0 && c == q:
			q = 0
		case q == 0 && (c == '"' || c == '\''):
			q = c
		case q == 0 && c == '#':
			return strings.TrimSpace(s[:i])
		}
	}
	return strings.TrimSpace(s)
}

var gemSourceOpts = set("git", "github", "gitlab", "bitbucket", "path", "source")
var gemBenignOpts = set("require", "group", "groups", "platform", "platforms", "branch", "ref", "tag", "submodules", "glob", "force_ruby_platform", "autorequire")

// gemOpts finds the option names (name: or :name =>) of a gem line.
func gemOpts(rest string) (src []string, other bool) {
	for _, part := range strings.Split(rest, ",") {
		p := strings.TrimSpace(part)
		var name, val string
		if strings.HasPrefix(p, ":") && strings.Contains(p, "=>") {
			n, v, _ := strings.Cut(p[1:], "=>")
			name, val = strings.TrimSpace(n), strings.TrimSpace(v)
		} else if n, v, ok := strings.Cut(p, ":"); ok && !strings.ContainsAny(n, `"' `) && n != "" {
			name, val = n, strings.TrimSpace(v)
		} else {
			continue
		}
		switch {
		case gemSourceOpts[name]:
			src = append(src, name+": "+val)
		case !gemBenignOpts[name]:
			if name == "install_if" {
				other = true
			} else {
				src = append(src, name+": "+val)
			}
		}
	}
	sort.Strings(src)
	return src, other
}

var gemfileBenign = set("group", "groups", "platforms", "platform", "end", "ruby", "gemspec", "env", "}", "else", "do")

// gemfileFacts reads a Gemfile: a Ruby DSL, read line by line; a line that
// is not one of its statements is Ruby code run by bundler.
func gemfileFacts(data []byte, fs *facts) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	var cur strings.Builder
	for i, l := range ls {
		t := rubyStrip(l)
		if t == "" && cur.Len() == 0 {
			continue
		}
		if _, ok := rubyQuoted(t); !ok {
			return fmt.Errorf("manifest: Gemfile: line %d: unbalanced quotes", i+1)
		}
		if strings.HasSuffix(t, ",") || strings.HasSuffix(t, "\\") {
			cur.WriteString(strings.TrimSuffix(t, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(t)
		t = strings.TrimSpace(cur.String())
		cur.Reset()
		word := t
		if j := strings.IndexAny(t, " (\t"); j >= 0 {
			word = t[:j]
		}
		q, _ := rubyQuoted(t)
		switch word {
		case "source":
			if defaultGemSource(q) {
				fs.note("source "+q, q)
			} else {
				fs.add(KindSource, "source "+q, q)
			}
		case "gem":
			if q == "" {
				return fmt.Errorf("manifest: Gemfile: line %d: gem without a name", i+1)
			}
			src, runs := gemOpts(t)
			if len(src) > 0 {
				fs.set("gem "+q, fact{kind: KindSource, val: strings.Join(src, ", "), flag: true})
			} else {
				fs.note("gem "+q, t)
			}
			if runs {
				fs.add(KindRuns, "gem "+q+" install_if", t)
			}
		case "git_source":
			fs.add(KindSource, "git_source "+strings.Trim(strings.TrimPrefix(t, "git_source"), "( :"), t)
		case "git", "path", "github":
			fs.add(KindSource, word+" "+q, t)
		case "plugin", "eval_gemfile", "install_if":
			fs.add(KindRuns, word+" "+q, t)
		default:
			if gemfileBenign[word] || strings.HasPrefix(word, "#") {
				continue
			}
			fs.add(KindRuns, "code: "+clip(t), t)
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

// gemfileLockFacts reads Gemfile.lock: its GIT/PATH sources and remotes,
// and its CHECKSUMS.
func gemfileLockFacts(data []byte, fs *facts) error {
	ls, err := lines(data)
	if err != nil {
		return err
	}
	sec := ""
	for i, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if l[0] != ' ' {
			if strings.ToUpper(l) != l {
				return fmt.Errorf("manifest: Gemfile.lock: line %d: expected a section", i+1)
			}
			sec = strings.TrimSpace(l)
			continue
		}
		if sec == "" {
			return fmt.Errorf("manifest: Gemfile.lock: line %d: outside a section", i+1)
		}
		t := strings.TrimSpace(l)
		switch {
		case strings.HasPrefix(t, "remote:"):
			u := strings.TrimSpace(t[len("remote:"):])
			k := sec + " remote " + u
			if sec == "GEM" && defaultGemSource(u) {
				fs.note(k, u)
			} else {
				fs.add(KindSource, k, u)
			}
		case sec == "CHECKSUMS":
			if j := strings.Index(t, ") "); j > 0 {
				fs.set("checksum "+t[:j+1], fact{kind: KindChecksum, val: t[j+2:], flag: true, changedOnly: true})
			}
		}
	}
	if fs.over {
		return errTooMany
	}
	return nil
}

func gemrcFacts(data []byte, fs *facts) error {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("manifest: .gemrc: %w", err)
	}
	for k, v := range m {
		switch strings.TrimPrefix(k, ":") {
		case "sources":
			l, _ := v.([]any)
			for _, x := range l {
				u := str(x)
				if defaultGemSource(u) {
					fs.note("sources "+u, u)
				} else {
					fs.add(KindSource, ":sources: "+u, u)
				}
			}
		case "ssl_verify_mode":
			if str(v) == "0" {
				fs.add(KindChecksum, k, "0")
			}
		case "ssl_ca_cert":
			fs.add(KindChecksum, k, str(v))
		}
	}
	return nil
}

// bundleConfigFacts reads .bundle/config: BUNDLE_* keys judged as Env.
func bundleConfigFacts(data []byte, fs *facts) error {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("manifest: .bundle/config: %w", err)
	}
	for k, v := range m {
		s := str(v)
		if cs := envChanges(k, s); len(cs) > 0 {
			fs.add(cs[0].Kind, k, s)
		} else {
			fs.note(k, s)
		}
	}
	return nil
}

// oneFilePattern is a files pattern that names one file, anchored at both
// ends (^docs/placeholder$): no alternation, class, group or wildcard.
var oneFilePattern = regexp.MustCompile(`^\^(?:[\w/-]|\\\.)+\$$|^\^?(?:[\w-]+/)*(?:README|CHANGELOG|LICENSE|NOTICE|none|nothing|never|nowhere|dummy|placeholder|disabled)(?:\\\.\w+)?/?\$?$`)

// preCommitFacts reads .pre-commit-config.yaml: each remote repo is a
// source; the hooks it runs, and each local hook's entry, run code.
func preCommitFacts(data []byte, fs *facts) error {
	var c struct {
		DefaultStages []string `yaml:"default_stages"`
		Repos         []struct {
			Repo  string `yaml:"repo"`
			Rev   string `yaml:"rev"`
			Hooks []struct {
				ID       string   `yaml:"id"`
				Entry    string   `yaml:"entry"`
				Language string   `yaml:"language"`
				Files    string   `yaml:"files"`
				Exclude  string   `yaml:"exclude"`
				Stages   []string `yaml:"stages"`
			} `yaml:"hooks"`
		} `yaml:"repos"`
	}
	if err := yaml.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("manifest: .pre-commit-config.yaml: %w", err)
	}
	// rules 22: hooks moved to the manual stage run only when asked to
	manualOnly := func(st []string) bool {
		return len(st) > 0 && !slices.ContainsFunc(st, func(x string) bool { return x != "manual" })
	}
	if len(c.DefaultStages) > 0 {
		fs.set("default_stages", fact{kind: KindChecks, val: strings.Join(c.DefaultStages, ",") + " (hooks run only when asked for)", flag: manualOnly(c.DefaultStages)})
	}
	for _, r := range c.Repos {
		if len(fs.m) >= maxEntries {
			return errTooMany
		}
		for _, h := range r.Hooks {
			if len(h.Stages) > 0 {
				fs.set("stages of hook "+h.ID, fact{kind: KindChecks, val: strings.Join(h.Stages, ",") + " (the hook runs only when asked for)", flag: manualOnly(h.Stages)})
			}
			// rules 22: a hook narrowed to one named file, or told to
			// exclude everything, checks nothing
			if h.Files != "" {
				fs.set("files of hook "+h.ID, fact{kind: KindChecks, val: h.Files + " (the hook runs on one named file)", cmp: h.Files, flag: oneFilePattern.MatchString(h.Files)})
			}
			if MatchesAll(h.Exclude) || h.Exclude == "^.*$" || h.Exclude == "." {
				fs.set("exclude of hook "+h.ID, fact{kind: KindChecks, val: h.Exclude + " (the hook excludes every file)", flag: true})
			}
		}
		switch r.Repo {
		case "meta":
			continue
		case "local":
			for _, h := range r.Hooks {
				fs.set("hook "+h.ID, fact{kind: KindRuns, val: h.Language + ": " + h.Entry, flag: true})
			}
			continue
		}
		fs.set("repo "+r.Repo, fact{kind: KindSource, val: r.Repo + "@" + r.Rev, cmp: r.Repo, flag: true})
		// rules 16: a hook of the repository as the repository defines it
		// runs the code its pinned revision holds (the repo fact above
		// reports a new source or revision); a hook whose entry is
		// overridden runs what the entry says
		var ids []string
		for _, h := range r.Hooks {
			if h.Entry != "" {
				ids = append(ids, h.ID+"="+h.Entry)
			}
		}
		sort.Strings(ids)
		if len(ids) > 0 {
			fs.set("hooks "+r.Repo, fact{kind: KindRuns, val: strings.Join(ids, " "), flag: true})
		}
	}
	return nil
}
