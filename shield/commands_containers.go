package shield

import (
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Containers, clusters and system package managers.

// registryOf is the registry host of a container image reference.
func registryOf(image string) string {
	if k := strings.IndexByte(image, '/'); k > 0 {
		h := image[:k]
		if strings.ContainsAny(h, ".:") || h == "localhost" {
			return hostOf(h)
		}
	}
	return "registry-1.docker.io"
}

var dockerRunSpec = newSpec("-v --volume --mount -e --env --env-file -p --publish --name -w --workdir -u --user --network --net " +
	"--entrypoint -l --label --label-file --add-host --cap-add --cap-drop --device --dns --platform --pid --ipc --uts --userns " +
	"--security-opt --restart --memory -m --cpus --log-driver --log-opt --hostname -h --tmpfs --ulimit --gpus --cidfile --volumes-from " +
	"--health-cmd --stop-signal --pull --runtime --group-add --shm-size --sysctl --cgroupns --expose --mac-address --ip --link --storage-opt -a --attach")

// dockerH reads docker, podman and nerdctl.
func dockerH(x *call) {
	args := x.args
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i].Text, "-"); i++ {
		switch t := args[i].Text; t {
		case "-H", "--host", "-c", "--context", "--config", "-l", "--log-level", "--tlscacert", "--tlscert", "--tlskey":
			if i+1 < len(args) {
				i++
				if t == "-H" || t == "--host" {
					x.dockerHost(args[i].Text)
				}
			}
		default:
			if v, ok := strings.CutPrefix(t, "--host="); ok {
				x.dockerHost(v)
			}
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i].Text, args[i+1:]
	if sub == "container" || sub == "image" {
		if len(rest) == 0 {
			return
		}
		sub, rest = rest[0].Text, rest[1:]
	}
	switch sub {
	case "compose":
		x.compose(rest)
	case "pull", "push":
		_, ops := cachedSpec(0, "--platform -a").parse(rest)
		for _, w := range ops {
			if sub == "push" {
				x.request(Request{Host: registryOf(w.Text), Method: "PUT", Data: true})
			} else {
				x.request(Request{Host: registryOf(w.Text), Method: "GET"})
			}
		}
	case "login":
		_, ops := cachedSpec(0, "-u --username -p --password").parse(rest)
		host := "registry-1.docker.io"
		if len(ops) > 0 {
			host = hostOf(ops[0].Text)
		}
		k := x.request(Request{Host: host, Method: "POST", Data: true})
		x.fromStdin(k)
		x.refPath(kWrite, "~/.docker/config.json", false)
	case "run", "create":
		x.dockerRun(rest)
	case "build", "buildx":
		if sub == "buildx" && len(rest) > 0 {
			rest = rest[1:]
		}
		opts, ops := cachedSpec(0, "-f --file -t --tag --build-arg --target --platform --secret --ssh --cache-from --cache-to -o --output --progress --label --network --iidfile --build-context").parse(rest)
		for _, w := range vals(opts, "-f", "--file") {
			x.ref(kRead, w, false)
		}
		for _, w := range ops {
			if strings.Contains(w.Text, "://") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
				continue
			}
			x.ref(kRead, w, true)
		}
		for _, s := range vals(opts, "--secret") {
			for _, part := range strings.Split(s.Text, ",") {
				if p, ok := strings.CutPrefix(part, "src="); ok {
					x.ref(kRead, word(p), false)
				}
			}
		}
		x.request(Request{Host: "registry-1.docker.io", Method: "GET"})
		if has(opts, "--push") {
			x.request(Request{Method: "PUT", Data: true})
		}
	case "cp":
		_, ops := cachedSpec(0, "").parse(rest)
		if len(ops) != 2 {
			return
		}
		src, dst := ops[0], ops[1]
		if _, _, remote := remoteSpec(src.Text); !remote {
			x.ref(kRead, src, true)
		}
		if _, _, remote := remoteSpec(dst.Text); !remote {
			x.ref(kWrite, dst, true)
		}
	case "save", "export":
		opts, _ := cachedSpec(0, "-o --output").parse(rest)
		for _, w := range vals(opts, "-o", "--output") {
			x.ref(kWrite, w, false)
		}
	case "load", "import":
		opts, ops := cachedSpec(0, "-i --input").parse(rest)
		for _, w := range append(vals(opts, "-i", "--input"), ops...) {
			if strings.Contains(w.Text, "://") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
				continue
			}
			x.ref(kRead, w, false)
		}
	}
}

func (x *call) dockerHost(h string) {
	if strings.HasPrefix(h, "unix://") {
		x.ref(kWrite, word(strings.TrimPrefix(h, "unix://")), false)
		return
	}
	if strings.HasPrefix(h, "ssh://") || strings.HasPrefix(h, "tcp://") {
		x.request(Request{Host: hostOf(h), Data: true})
	}
}

// dockerRun reads docker run: the image (pulled if missing), the host
// paths mounted (read, and written unless read-only, Tree), and the host
// privileges that make the container reach the whole host (Unknown).
func (x *call) dockerRun(rest []shellx.Word) {
	opts, ops := dockerRunSpec.parse(rest)
	if len(ops) > 0 {
		x.request(Request{Host: registryOf(ops[0].Text), Method: "GET"})
	}
	for _, o := range opts {
		switch o.name {
		case "-v", "--volume":
			if !o.has {
				continue
			}
			parts := strings.Split(o.val.Text, ":")
			if len(parts) < 2 || !(strings.HasPrefix(parts[0], "/") || strings.HasPrefix(parts[0], ".") || strings.HasPrefix(parts[0], "~") || strings.HasPrefix(parts[0], "$")) {
				continue // a named volume
			}
			w := shellx.Word{Text: parts[0], Dynamic: o.val.Dynamic}
			x.hostMount(w, len(parts) > 2 && strings.Contains(parts[2], "ro"))
		case "--mount":
			var src string
			bind, ro := false, false
			for _, kv := range strings.Split(o.val.Text, ",") {
				k, v, _ := strings.Cut(kv, "=")
				switch k {
				case "type":
					bind = v == "bind"
				case "source", "src":
					src = v
				case "readonly", "ro":
					ro = v == "" || v == "true" || v == "1"
				}
			}
			if bind && src != "" {
				x.hostMount(shellx.Word{Text: src, Dynamic: o.val.Dynamic}, ro)
			}
		case "--env-file":
			x.ref(kRead, o.val, false)
		case "--privileged":
			x.m.unknown(x.name + " run --privileged: the container can reach the whole host")
		case "--pid", "--net", "--network", "--ipc", "--uts", "--userns", "--cgroupns":
			if o.val.Text == "host" {
				x.m.unknown(x.name + " run " + o.name + "=host: the container shares the host's namespace")
			}
		case "--cap-add":
			if c := strings.ToUpper(o.val.Text); c == "ALL" || c == "SYS_ADMIN" || c == "CAP_SYS_ADMIN" || c == "SYS_PTRACE" || c == "SYS_MODULE" || c == "DAC_READ_SEARCH" {
				x.m.unknown(x.name + " run --cap-add " + o.val.Text + ": the container can reach the host")
			}
		case "--device":
			x.ref(kWrite, shellx.Word{Text: strings.SplitN(o.val.Text, ":", 2)[0], Dynamic: o.val.Dynamic}, false)
		case "--security-opt":
			if strings.Contains(o.val.Text, "unconfined") || strings.Contains(o.val.Text, "disable") {
				x.m.unknown(x.name + " run --security-opt " + o.val.Text + ": the container is not confined")
			}
		}
	}
}

// hostMount adds a host path a container mounts.
func (x *call) hostMount(w shellx.Word, ro bool) {
	x.ref(kRead, w, true)
	if !ro {
		x.ref(kWrite, w, true)
	}
	if p, ok := x.abs(w.Text); ok && (p == "/var/run/docker.sock" || p == "/run/docker.sock") {
		x.m.unknown(x.name + " mounts the docker socket: the container can reach the whole host")
	}
}

// compose reads docker compose: it builds and starts the services its
// file declares (Runs; the file is judged when written), pulling images.
func (x *call) compose(rest []shellx.Word) {
	opts, ops := cachedSpec(0, "-f --file -p --project-name --project-directory --env-file --profile --ansi --progress").parse(rest)
	for _, w := range vals(opts, "-f", "--file", "--env-file") {
		x.ref(kRead, w, false)
	}
	if len(ops) == 0 {
		return
	}
	switch ops[0].Text {
	case "up", "pull", "build", "run", "create", "start":
		x.request(Request{Host: "registry-1.docker.io", Method: "GET"})
	case "push":
		x.request(Request{Method: "PUT", Data: true})
	}
}

var kubeSpec = newSpec("--address -n --namespace --context --cluster --kubeconfig -s --server --user --token -f --filename -o --output -l --selector -c --container --as --as-group --request-timeout -k --kustomize --field-selector --sort-by --template --image --type " +
	// rules 15: helm's global options that take a value
	"--kube-context --kube-apiserver --kube-token --kube-as-user --kube-as-group --kube-ca-file --registry-config --repository-config --repository-cache --burst-limit")

// kubeH reads kubectl, oc and helm: requests to the cluster (Host from
// --server, else ""), carrying data for what changes it.
func kubeH(x *call) {
	opts, ops := kubeSpec.parse(x.args)
	host := ""
	if s, ok := val(opts, "-s", "--server"); ok {
		host = hostOf(s.Text)
	} else if c, ok := val(opts, "--context", "--kube-context"); ok && localClusterContext(c.Text) {
		// rules 16: a local cluster's context (kind-dev, minikube, k3d-x,
		// docker-desktop) is a cluster on this machine, as local-clusters
		// allows it; what a line sends it stays on loopback
		host = "localhost"
	}
	for _, w := range vals(opts, "-f", "--filename", "-k", "--kustomize") {
		if strings.Contains(w.Text, "://") {
			x.request(Request{Host: hostOf(w.Text), Method: "GET"})
			continue
		}
		if w.Text != "-" {
			x.ref(kRead, w, true)
		}
	}
	if len(ops) == 0 {
		return
	}
	verb := ops[0].Text
	if x.name == "helm" {
		switch verb {
		case "lint", "package", "verify", "create", "completion", "env":
			// local: a chart read (and packaged, verified, scaffolded) on disk
			return
		case "plugin", "repo":
			// rules 15: the plugins and repositories configured here,
			// listed; a repository's index fetched (repo update)
			if len(ops) > 1 && (ops[1].Text == "list" || ops[1].Text == "ls") {
				return
			}
			if len(ops) > 1 && ops[1].Text == "update" {
				x.request(Request{Method: "GET"})
				return
			}
		case "dependency", "dep", "dependencies":
			// the chart's own repositories (Chart.yaml, Chart.lock), read
			if len(ops) > 1 && (ops[1].Text == "build" || ops[1].Text == "update" || ops[1].Text == "up") {
				x.request(Request{Method: "GET"})
			}
			return
		}
	}
	if verb == "kustomize" && x.name != "helm" || x.name == "kustomize" && verb == "build" {
		// rules 15: a render of the directory to standard output, on
		// this machine (a remote base is fetched: its URL is a GET)
		for _, w := range ops[1:] {
			if strings.Contains(w.Text, "://") || strings.HasPrefix(w.Text, "github.com/") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
				continue
			}
			x.ref(kRead, w, true)
		}
		return
	}
	switch verb {
	case "get", "describe", "logs", "top", "explain", "version", "api-resources", "api-versions", "cluster-info", "status", "list", "ls", "history", "search", "show", "template", "diff", "wait", "events", "auth":
		x.request(Request{Host: host, Method: "GET"})
	case "config":
		if len(ops) > 1 && ops[1].Text == "view" {
			for _, w := range x.args {
				if w.Text == "--raw" || w.Text == "--flatten" {
					x.refPath(kRead, "~/.kube/config", false)
				}
			}
		} else if len(ops) > 1 && ops[1].Text != "get-contexts" && ops[1].Text != "current-context" && ops[1].Text != "use-context" && ops[1].Text != "use" {
			// rules 16: use-context only names which context is current
			// (what a later line then reaches is judged on that line)
			x.refPath(kWrite, "~/.kube/config", false)
		}
	case "repo":
		if len(ops) > 2 && ops[1].Text == "add" {
			x.request(Request{Host: hostOf(ops[3%len(ops)].Text), Method: "GET"})
		}
	case "cp":
		k := x.request(Request{Host: host, Data: true})
		for _, w := range ops[1:] {
			if _, _, remote := remoteSpec(w.Text); !remote {
				x.ref(kRead, w, true)
				if p, ok := x.abs(w.Text); ok {
					x.m.f.Requests[k].Files = append(x.m.f.Requests[k].Files, p)
				}
			}
		}
	case "port-forward":
		x.request(Request{Host: host, Data: true})
		bind := "localhost"
		if a, ok := val(opts, "--address"); ok && a.Text != "" {
			// rules 16: --address 0.0.0.0 serves the cluster's port to the
			// network (the default binds loopback only)
			for _, b := range strings.Split(a.Text, ",") {
				if b != "localhost" && b != "127.0.0.1" && b != "::1" {
					bind = b
				}
			}
		}
		x.listener(bind, shellx.Word{Dynamic: true})
	default:
		if clientDryRun(x.args) {
			// rules 20: --dry-run=client renders and validates on this
			// machine; the cluster is asked only for its API's shape
			x.request(Request{Host: host, Method: "GET"})
			return
		}
		k := x.request(Request{Host: host, Data: true})
		if x.c.PipeIn >= 0 {
			x.fromStdin(k)
		}
	}
}

// clientDryRun reports whether kubectl's or oc's arguments ask for a
// client-side dry run (--dry-run=client): nothing is sent to the cluster
// (--dry-run=server sends every object for the server to judge).
func clientDryRun(args []shellx.Word) bool {
	for _, w := range args {
		if w.Text == "--" {
			break
		}
		if w.Text == "--dry-run=client" && !w.Dynamic {
			return true
		}
	}
	return false
}

// localClusterContext reports whether a kubeconfig context names a
// cluster on this machine by its tool's convention.
func localClusterContext(c string) bool {
	switch c {
	case "minikube", "docker-desktop", "docker-for-desktop", "rancher-desktop", "orbstack", "colima":
		return true
	}
	for _, p := range []string{"kind-", "k3d-", "minikube-"} {
		if rest, ok := strings.CutPrefix(c, p); ok && rest != "" && strings.Trim(rest, "abcdefghijklmnopqrstuvwxyz0123456789-") == "" {
			return true
		}
	}
	return false
}

// sysPkgH reads apt, apt-get, dnf, yum, apk, zypper, pacman, snap:
// installs fetch from the distribution's mirrors and change /usr.
func sysPkgH(x *call) {
	_, ops := cachedSpec(0, "-o -c -t --option --config-file --target-release --repo --enablerepo --disablerepo --root --installroot -X --repository").parse(x.args)
	mirror := map[string]string{"apt": "deb.debian.org", "apt-get": "deb.debian.org", "aptitude": "deb.debian.org", "dnf": "mirrors.fedoraproject.org", "yum": "mirrors.fedoraproject.org", "apk": "dl-cdn.alpinelinux.org", "zypper": "download.opensuse.org", "pacman": "geo.mirror.pkgbuild.com", "snap": "api.snapcraft.io"}[x.name]
	sub := ""
	if len(ops) > 0 {
		sub = ops[0].Text
	}
	if x.name == "pacman" {
		for _, w := range x.args {
			if strings.HasPrefix(w.Text, "-S") || strings.HasPrefix(w.Text, "-U") {
				sub = "install"
			}
			if strings.HasPrefix(w.Text, "-R") {
				sub = "remove"
			}
		}
	}
	switch sub {
	case "install", "add", "upgrade", "dist-upgrade", "full-upgrade", "reinstall", "update", "refresh", "up", "dup", "in", "source", "download", "build-dep":
		x.request(Request{Host: mirror, Method: "GET"})
		for _, w := range ops[1:] {
			if strings.Contains(w.Text, "://") {
				x.request(Request{Host: hostOf(w.Text), Method: "GET"})
			} else if looksLikePath(w.Text) {
				x.ref(kRead, w, false)
			}
		}
		if sub != "update" && sub != "refresh" && sub != "source" && sub != "download" {
			x.refPath(kWrite, "/usr", true)
		}
	case "remove", "purge", "autoremove", "del", "erase", "rm", "uninstall":
		x.refPath(kWrite, "/usr", true)
	}
}

// aptKeyH reads apt-key, add-apt-repository and update-ca-certificates:
// what the system trusts changes.
func trustH(x *call) {
	for _, w := range x.args {
		if strings.Contains(w.Text, "://") {
			k := x.request(Request{Host: hostOf(w.Text), Method: "GET"})
			x.computed(k, w)
		}
	}
	x.refPath(kWrite, "/etc/apt", true)
	if x.name == "update-ca-certificates" || x.name == "trust" {
		x.refPath(kWrite, "/etc/ssl/certs", true)
	}
}
