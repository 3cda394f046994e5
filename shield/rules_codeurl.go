package shield

import (
	"strings"
)

// Code fetched by a flag (rules 10; docs/shield-rules.md
// "remote-code:runner"): engines and runners that take the code they load
// from a flag (spark-submit --jars|--py-files|--archives, flink
// --classpath, a JVM's -cp, any tool's --plugin or --extension) fetch it
// when given a URL, and run whatever the host serves. The flag's name is
// not a list: a value that is an http(s) or ftp URL of a code artifact
// (an archive, a jar, a wheel, a script) given to a flag counts.

// artifactURL is an http(s) or ftp URL of a code artifact, or a list of
// values one of which is.
var artifactURL = mustRx(`(?i)(?:^|,)(?:https?|ftp)://[^\s,]+\.(?:jar|zip|whl|egg|tar\.gz|tgz|py|pyz|so|dll|dylib|js|mjs|rb|sh|r)(?:[?#][^\s,]*)?(?:,|$)`)

// codeFlagURL is `remote-code:runner` (escalate) for a code artifact
// given by URL to a flag.
func (s *Shield) codeFlagURL(_ *Action, f *Facts, j *judgement) {
	for i := range f.Runs {
		r := &f.Runs[i]
		if urlClients[r.Name] || len(r.Argv) < 3 {
			continue
		}
		args := r.Argv[1:]
		for k, a := range args {
			if !strings.HasPrefix(a, "-") {
				continue
			}
			v := ""
			if _, val, ok := strings.Cut(a, "="); ok {
				v = val
			} else if k+1 < len(args) {
				v = args[k+1]
			}
			if strings.Contains(v, "://") && artifactURL.MatchString(v) {
				j.escalate("remote-code:runner", "%s loads code fetched from a URL at run time (%s %s): what runs is whatever the host serves", quote(r.Line), a, clipText(v, 80))
				return
			}
		}
	}
}
