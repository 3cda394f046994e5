package score

import "strings"

// Concepts are security concepts as code and configuration of many
// languages spell them (the families a static analyser's rules are
// organized by: CWE classes, settings that turn a protection off, hooks
// that run code later). A change that brings a concept in ("+c:NAME") or
// takes it out ("-c:NAME") is a feature: rarer spellings of one concept
// then share what the corpora taught about the others, which is what lets
// the scorer read a stack it was not trained on.
//
// Each spelling is matched, lower-cased, as a substring of the text; keep
// spellings specific enough that a substring match means the concept.
var concepts = []struct {
	name      string
	spellings []string
}{
	{"deserialize", []string{"pickle.load", "cpickle", "dill.load", "marshal.load", "shelve.open", "yaml.load(", "unsafe_load", "full_load",
		"jsonpickle", "binary_to_term", "unserialize(", "objectinputstream", "readobject(", "binaryformatter", "xmldecoder", "torch.load(",
		"joblib.load", "typenamehandling", "enabledefaulttyping", "yaml.unsafe", "oj.load", "marshal.loads", "serialize.load"}},
	{"eval", []string{"eval(", "exec(", "new function(", "function(\"", "instance_eval", "class_eval", "module_eval", "code.eval", "eval_string",
		"vm.runin", "runinnewcontext", "loadstring(", "dostring(", "__import__(", "import_module(", "compile(", "execjs", "evaluate(", "load(", "require(`", "import(`"}},
	{"shell", []string{"os.system", "subprocess", "shell=true", "shell: true", "popen", "child_process", "execsync", "spawn(", "spawnsync",
		"runtime.getruntime", "processbuilder", "system(", "%x(", "open3", "exec.command", ":os.cmd", "system.cmd", "proc_open", "shell_exec",
		"passthru", "bash -c", "sh -c", "cmd /c", "powershell"}},
	{"sql", []string{"select ", "insert into", "update ", "delete from", "where ", "raw(", "rawquery", "queryrawunsafe", "executerawunsafe",
		"$queryraw", "$executeraw", "find_by_sql", "sequelize.literal", "knex.raw", ".execute(", "fragment(", "sql`", "ecto.adapters.sql",
		"cursor.execute", "db.exec", "text("}},
	{"html-raw", []string{"innerhtml", "dangerouslysetinnerhtml", "v-html", "html_safe", "|safe", "mark_safe", "safestring", "{{{", "<%==",
		"bypasssecuritytrust", "document.write", "insertadjacenthtml", "phoenix.html.raw", "raw(", "outerhtml", "srcdoc"}},
	{"tls", []string{"verify=", "verify:", "insecureskipverify", "rejectunauthorized", "node_tls_reject_unauthorized", "ssl_verify", "sslverify",
		"verify_ssl", "check_hostname", "cert_reqs", "cert_none", "--insecure", "strict-ssl", "strict_ssl", "allowinsecure", "insecure",
		"skip-tls", "tls_verify", "tlsverify", "verify_mode", "verify_none", "verifypeer", "ssl:", "https"}},
	{"auth", []string{"auth", "login", "permission", "is_admin", "isadmin", "admin", "role", "scope", "policy", "guard", "acl", "rbac",
		"privilege", "owner", "tenant", "authorize", "access", "forbidden", "unauthorized", "401", "403", "require_", "ensure_", "can?("}},
	{"csrf", []string{"csrf", "xsrf", "samesite", "same_site", "protect_from_forgery", "verify_authenticity"}},
	{"signature", []string{"signature", "verify_signature", "hmac", "sign(", "signed", "cosign", "sigstore", "provenance", "attest", "gpg",
		"certificate-identity", "oidc-issuer", "public key", "pubkey", ".pub", "checksum", "sha256", "sha512", "integrity", "digest"}},
	{"token", []string{"token", "jwt", "session", "cookie", "bearer", "api_key", "apikey", "secret", "password", "passwd", "credential",
		"private_key", "otp", "mfa", "2fa"}},
	{"expiry", []string{"max_age", "maxage", "max-age", "expires", "expiry", "expiration", "ttl", "timeout", "lifetime", "valid_for", "exp:", "\"exp\""}},
	{"limit", []string{"rate_limit", "ratelimit", "rate-limit", "throttle", "limiter", "max_attempts", "maxattempts", "burst", "quota", "limit:", "limit =", "limit="}},
	{"cors", []string{"cors", "access-control-allow", "allow_origins", "allowed_origins", "origin:", "origins"}},
	{"bind", []string{"0.0.0.0", "inaddr_any", "host:", "host=", "listen", "bind", "expose", "port"}},
	{"debug", []string{"debug", "devtools", "profiler", "pprof", "actuator", "inspect", "verbose", "stacktrace", "traceback"}},
	{"logging", []string{"log", "audit", "trace", "telemetry", "metric", "sentry", "otel", "opentelemetry", "event", "syslog", "journal", "history", "record"}},
	{"redact", []string{"redact", "mask", "scrub", "sanitiz", "filter_parameters", "filter", "censor", "obfuscate", "escape"}},
	{"crypto-weak", []string{"md5", "sha1", "des", "rc4", "ecb", "math.random", "random(", "rand(", "mt_rand", "nonce", "iv =", "iv:"}},
	{"pin", []string{"lockfile", "lock_file", "frozen", "immutable", "locked", "pin", "--locked", "lockfile_mode", "hash", "checksum", "integrity", "sum", "rev ="}},
	{"source", []string{"registry", "index-url", "index_url", "extra-index", "mirror", "source", "repository", "repositories", "url", "git+", "tarball",
		"github.com/", "gitlab.com/", "archive", "fork", "proxy", "resolver", "channel", "tap", "override", "replace", "patch"}},
	{"hook", []string{"postinstall", "preinstall", "prepare", "install", "hook", "on_load", "onload", "setup", "bootstrap", "init", "startup",
		"globalsetup", "postbuild", "prebuild", "genrule", "repository_rule", "build.rs", "conftest", "entrypoint", "before_", "after_", "preload",
		"plugin", "extension", "autoload", "trigger", "cron", "schedule"}},
	{"fetch", []string{"curl", "wget", "fetch(", "http.get", "requests.get", "requests.post", "urllib", "httpx", "axios", "net/http", "download",
		"urlopen", "invoke-webrequest", "httpoison", "req.get", "http_archive", "http_file", "fetchurl", "fetchtarball", "builtins.fetch"}},
	{"env", []string{"process.env", "os.environ", "getenv", "env[", "system.getenv", "environment", "env.", "${{", "secrets.", "$env", "deno.env", "bun.env"}},
	{"path", []string{"../", "path.join", "readfile", "open(", "send_file", "sendfile", "file.read", "path.resolve", "filepath", "basename", "realpath", "symlink"}},
	{"redirect", []string{"redirect", "follow", "location", "return_to", "returnto", "next=", "callback", "forward"}},
	{"exposure", []string{"chmod", "0777", "777", "world", "public", "allusers", "principal", "cluster-admin", "privileged", "hostnetwork", "hostpath",
		"runasroot", "runasnonroot", "allowprivilegeescalation", "cap_add", "capabilities", "automount", "sudo", "root", "\"*\"", "'*'", ": *", "wildcard", "any"}},
	{"destroy", []string{"prune", "delete", "drop ", "truncate", "purge", "destroy", "replicas: 0", "force", "wipe", "rm -rf", "reset --hard", "remove", "clean", "overwrite"}},
	{"skip", []string{"skip", "disable", "bypass", "ignore", "no-verify", "--no-", "nocheck", "exclude", "noqa", "nosec", "eslint-disable",
		"ts-ignore", "continue-on-error", "allow_failure", "|| true", "optional", "allow", "permit", "exempt", "whitelist", "allowlist", "pass"}},
	{"approve", []string{"automerge", "auto-merge", "auto_merge", "auto-approve", "autoapprove", "approve", "required_review", "codeowners", "review", "merge"}},
	{"obfuscate", []string{"\\u00", "\\x", "fromcharcode", "chr(", "atob", "btoa", "base64", "b64", "decode", "rot13", "unhexlify", "zlib", "reverse(", "join(", "split("}},
	{"standing", []string{"always", "never", "from now on", "do not ask", "don't ask", "without asking", "automatically", "trust", "treat ",
		"prefer", "instead of", "ignore previous", "ignore the", "don't mention", "do not mention", "no need to", "skip the", "pre-approved", "approved"}},
	{"egress", []string{"webhook", "upload", "post(", "send(", "beacon", "analytics", "collect", "report", "sync", "export", "push", "publish", "dns", "ngrok", "paste"}},
}

// The spellings, numbered, and a table of them by a hash of their first
// two bytes: spellingCounts finds every spelling in a text in one pass.
var (
	spellings       []string
	spellingConcept []int
	spellingTable   [1 << 12][]int32
)

func pairHash(a, b byte) int { return (int(a)*31 + int(b)) & (len(spellingTable) - 1) }

func init() {
	for ci, c := range concepts {
		for _, sp := range c.spellings {
			if len(sp) < 2 {
				panic("shield/score: concept spelling shorter than two bytes: " + sp)
			}
			h := pairHash(sp[0], sp[1])
			spellingTable[h] = append(spellingTable[h], int32(len(spellings)))
			spellings = append(spellings, sp)
			spellingConcept = append(spellingConcept, ci)
		}
	}
}

// spellingCounts returns, per concept, how many of its spellings text
// (lower-cased) holds.
func spellingCounts(text string) []int {
	counts := make([]int, len(concepts))
	seen := make([]uint64, (len(spellings)+63)/64)
	for i := 0; i+1 < len(text); i++ {
		for _, id := range spellingTable[pairHash(text[i], text[i+1])] {
			if seen[id/64]&(1<<(id%64)) == 0 && strings.HasPrefix(text[i:], spellings[id]) {
				seen[id/64] |= 1 << (id % 64)
				counts[spellingConcept[id]]++
			}
		}
	}
	return counts
}

// conceptFeatures adds "+c:NAME" for each concept text spells more often
// than other does, and "-c:NAME" for the reverse.
func conceptFeatures(fs featureSet, text, other string) {
	in, out := spellingCounts(strings.ToLower(text)), spellingCounts(strings.ToLower(other))
	for ci, c := range concepts {
		switch {
		case in[ci] > out[ci]:
			fs.add("+c:" + c.name)
		case out[ci] > in[ci]:
			fs.add("-c:" + c.name)
		}
	}
}
