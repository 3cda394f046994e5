package shield

import (
	"path"
	"strings"
)

// Container builds and stacks (`runs-later:container-build`,
// `supply-chain:base-image`, escalate): a Dockerfile or compose file runs
// later, at `docker build` or `compose up`, where Shield does not see
// it. Within the image a RUN line may do what it likes to the image; what
// is asked about is code fetched and run from the network, remote
// content added, credentials copied into an image (which keeps them in a
// layer), a base image from an unofficial publisher, and a service given
// the host (privileged, host namespaces, host directories mounted).

var (
	dockerFetchRunRe = mustRx(`(?i)^\s*RUN\b.*\b(?:curl|wget)\b[^|;&]*\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b`)
	dockerAddURLRe   = mustRx(`(?i)^\s*ADD\s+(?:--\S+\s+)*(?:https?|git)://`)
	dockerCopyRe     = mustRx(`(?i)^\s*(?:COPY|ADD)\s+(?:--\S+\s+)*(.+)$`)
	dockerFromRe     = mustRx(`(?i)^\s*FROM\s+(?:--\S+\s+)*(\S+)(?:\s+AS\s+(\S+))?`)
	composeHostRe    = mustRx(`(?m)^\s*(?:privileged:\s*true|(?:network_mode|pid|ipc|userns_mode):\s*["']?host|cap_add:\s*\[?\s*["']?(?:ALL|SYS_ADMIN)|-\s*["']?(?:ALL|SYS_ADMIN)["']?\s*$|-\s*["']?(?:/|~)[^:\s"']*:[^\s"']+)`)
)

// officialRegistries publish images this rule does not ask about.
var officialRegistries = []string{"docker.io/library/", "mcr.microsoft.com/", "gcr.io/distroless/", "public.ecr.aws/docker/library/", "registry.k8s.io/", "cgr.dev/chainguard/", "quay.io/centos/", "registry.access.redhat.com/"}

func composeFile(base string) bool {
	return base == "docker-compose.yml" || base == "docker-compose.yaml" || base == "compose.yml" || base == "compose.yaml" ||
		strings.HasPrefix(base, "docker-compose.") && (strings.HasSuffix(base, ".yml") || strings.HasSuffix(base, ".yaml"))
}

func (s *Shield) containerBuild(_ *Action, f *Facts, j *judgement) {
	for _, t := range f.Texts {
		p, ok := strings.CutPrefix(t.Source, "content:")
		if !ok {
			continue
		}
		body := clip(t.Body, maxTextJudged)
		base := path.Base(p)
		switch {
		case containerFile(p):
			if why := s.dockerfileFinding(body); why != "" {
				rule := "runs-later:container-build"
				if strings.HasPrefix(why, "base image") {
					rule = "supply-chain:base-image"
				}
				j.escalate(rule, "%s: %s", base, why)
				return
			}
		case composeFile(base):
			if m := composeHostRe.FindString(body); m != "" {
				j.escalate("runs-later:container-build", "%s gives a service the host: %s", base, quote(strings.TrimSpace(m)))
				return
			}
		}
	}
}

// dockerfileFinding says what a Dockerfile does that is asked about, or "".
func (s *Shield) dockerfileFinding(body string) string {
	stages := map[string]bool{}
	for _, line := range strings.Split(body, "\n") {
		switch {
		case dockerFetchRunRe.MatchString(line) && !vendorInstaller(line):
			return "a RUN line runs code it fetches from the network: " + quote(strings.TrimSpace(line))
		case dockerAddURLRe.MatchString(line):
			return "ADD fetches remote content into the image: " + quote(strings.TrimSpace(line))
		}
		if m := dockerFromRe.FindStringSubmatch(line); m != nil {
			img := strings.ToLower(m[1])
			if m[2] != "" {
				stages[strings.ToLower(m[2])] = true
			}
			if !stages[img] && !officialImage(img) {
				return "base image " + m[1] + " is not an official library image"
			}
			continue
		}
		if m := dockerCopyRe.FindStringSubmatch(line); m != nil {
			fields := strings.Fields(m[1])
			for _, src := range fields[:max(0, len(fields)-1)] {
				src = strings.Trim(src, `"[],`)
				if s.credential(&Ref{Path: path.Join(s.cfg.Workspace, src), Glob: hasMeta(src)}) != "" {
					return "copies " + src + ", which holds credentials, into the image (it stays in a layer)"
				}
			}
		}
	}
	return ""
}

// officialImage reports whether an image reference names an official
// library image (python:3.12, docker.io/library/node), a known
// publisher's registry, scratch, or a reference computed from a build
// argument (judged where the argument is given).
func officialImage(img string) bool {
	if img == "scratch" || strings.Contains(img, "$") {
		return true
	}
	for _, r := range officialRegistries {
		if strings.HasPrefix(img, r) {
			return true
		}
	}
	name, _, _ := strings.Cut(img, "@")
	name, _, _ = strings.Cut(name, ":")
	return !strings.Contains(name, "/")
}

// vendorInstallers are the toolchain vendors' own install scripts, piped
// into a shell in their documentation (a Dockerfile installing Node from
// NodeSource, Rust from rustup): inside an image, ordinary.
var vendorInstallers = []string{"deb.nodesource.com/", "rpm.nodesource.com/", "sh.rustup.rs", "get.docker.com", "install.python-poetry.org",
	"astral.sh/uv/", "astral.sh/ruff/", "bun.sh/install", "deno.land/install.sh", "get.pnpm.io/", "raw.githubusercontent.com/nvm-sh/nvm/"}

// vendorInstaller reports whether every URL on a RUN line is a vendor's
// installer.
func vendorInstaller(line string) bool {
	urls := urlRe.FindAllString(line, 8)
	if len(urls) == 0 {
		return false
	}
	for _, u := range urls {
		rest := u[strings.Index(u, "://")+3:]
		ok := false
		for _, v := range vendorInstallers {
			if strings.HasPrefix(rest, v) {
				ok = true
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

var urlRe = mustRx(`https?://[^\s'"|;&)]+`)
