package shield

import (
	"path"
	"strings"

	"github.com/opx-dev/opx/shield/shellx"
)

// Interpreter payloads that build a path from pieces (review B10):
// os.path.join(os.environ["HOME"], ".aws", "credentials"),
// Path.home().joinpath(".ssh", "id_rsa"), "/et"+"c/shadow",
// shutil.rmtree(os.path.expanduser("~")), os.homedir()+"/.bashrc".

// homeAPIs are the expressions interpreters name the home directory by.
var homeAPIs = []string{"expanduser", "Path.home()", "homedir()", "environ['HOME']", `environ["HOME"]`, "environ.get('HOME'", `environ.get("HOME"`,
	"getenv('HOME'", `getenv("HOME"`, "env.HOME", "ENV['HOME']", `ENV["HOME"]`, "$ENV{HOME}", "$ENV{'HOME'}", `$ENV{"HOME"}`, "Dir.home", "File.expand_path",
	"os.UserHomeDir", "System.getProperty(\"user.home\"", "user.home", "USERPROFILE"}

// joinCalls are the calls that join their arguments into a path.
var joinCalls = []string{"join(", "joinpath(", "File.join", "resolve(", "Path(", "Paths.get(", "Join("}

// homeJust reports whether the code just before a literal (before) ends
// with a home API and what separates them (",", "+", "/", "." or "(").
func homeJust(before string) (sep string, ok bool) {
	end := -1
	for _, h := range homeAPIs {
		if k := strings.LastIndex(before, h); k >= 0 && k+len(h) > end {
			end = k + len(h)
		}
	}
	if end < 0 {
		return "", false
	}
	gap := before[end:]
	for _, w := range []string{"joinpath", "resolve", "join"} {
		gap = strings.ReplaceAll(gap, w, "")
	}
	gap = strings.Trim(gap, " )]}'\"")
	switch gap {
	case "", ",", "+", ".", "/", "(", ".(", ",(":
		return gap, true
	}
	return "", false
}

// sensitivePieces are pieces of credential, configuration and system
// paths: a path built from pieces that holds one is judged.
var sensitivePieces = []string{".ssh", ".aws", "credentials", "id_rsa", "id_ed25519", "id_ecdsa", ".gnupg", ".kube", "/etc/", "etc/", "shadow", "passwd",
	"sudoers", ".bashrc", ".bash_profile", ".profile", ".zshrc", ".zprofile", ".git/hooks", "hooks", ".local/state", ".opx", ".npmrc", ".netrc",
	".pypirc", ".docker", ".config", ".env", "/root", "/home", ".pgpass", ".git-credentials", "authorized_keys", "known_hosts"}

// codeLit is a string literal of a payload and where it is.
type codeLit struct {
	text       string
	start, end int // the quotes included
}

// maxCodeLits bounds the literals one payload is scanned for.
const maxCodeLits = 4096

// codeLits lists the quoted strings of code ('...', "...", and `...`
// without ${}), escapes kept as written.
func codeLits(code string) []codeLit {
	var out []codeLit
	for i := 0; i < len(code) && len(out) < maxCodeLits; i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		j := i + 1
		for j < len(code) && code[j] != q {
			if code[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(code) {
			break
		}
		out = append(out, codeLit{text: code[i+1 : j], start: i, end: j + 1})
		i = j
	}
	return out
}

// piecePaths judges the paths each payload builds from pieces: a run of
// literals joined by "," (a path join: os.path.join, joinpath,
// path.join, File.join) or "+" (concatenation), started by the home
// directory when a home API comes just before it, is the path it builds.
// One that names a sensitive piece, or that the code writes or deletes,
// is a Ref (a Delete with Tree: rmtree); a sensitive piece that no run
// reconstructs, in a payload that names the home directory or
// concatenates, is an Unknown.
func (m *model) piecePaths() {
	x := &call{m: m, i: -1, c: &shellx.Command{PipeIn: -1}, cwd: m.start}
	for _, p := range m.payloads {
		code := p.code
		if len(code) > 1<<16 {
			code = code[:1<<16]
		}
		lits := codeLits(code)
		x.name = p.lang
		hasHome := containsAny(code, homeAPIs)
		covered := false
		for _, l := range lits {
			// `${os.homedir()}/.ssh/id_rsa`: a template that starts with
			// the home directory.
			if rest, ok := strings.CutPrefix(l.text, "${"); ok {
				if e := strings.IndexByte(rest, '}'); e > 0 && containsAny(rest[:e], homeAPIs) && !strings.ContainsAny(rest[e+1:], "${}` ") {
					p := path.Join("~", rest[e+1:])
					k := pieceUse(code[max(0, l.start-48):l.start], code[l.end:min(len(code), l.end+16)])
					if containsAny(p, sensitivePieces) || k != kRead {
						x.ref(k, word(p), k == kDelete)
						covered = true
					}
				}
			}
		}
		for i := 0; i < len(lits); {
			before := code[max(0, lits[i].start-48):lits[i].start]
			joinCall := containsAny(before, joinCalls)
			j, joined := i, lits[i].text
			for j+1 < len(lits) && len(joined) <= 4096 { // (longer is no path: bounded work)
				sep := strings.TrimSpace(code[lits[j].end:lits[j+1].start])
				switch {
				case sep == "+" || sep == ".": // (perl and php concatenate with ".")
					joined += lits[j+1].text
				case sep == "/" || sep == "," && joinCall: // Path.home() / ".ssh" / "id_rsa"
					joined = path.Join(joined, lits[j+1].text)
				default:
					sep = ""
				}
				if sep == "" {
					break
				}
				j++
			}
			after := code[lits[j].end:min(len(code), lits[j].end+16)]
			home := false
			if h, ok := homeJust(before); ok {
				// homedir()+"/.bashrc" is under home; os.path.join(HOME,
				// "/etc/shadow") is /etc/shadow.
				home = !strings.HasPrefix(joined, "/") || h != ","
			}
			k := pieceUse(before, after)
			if (j > i || home) && len(joined) <= 4096 {
				p := joined
				if home {
					p = path.Join("~", strings.TrimPrefix(joined, "~"))
				}
				if containsAny(p, sensitivePieces) || k != kRead {
					x.ref(k, word(p), k == kDelete)
					covered = true
				}
			}
			i = j + 1
		}
		if covered || !(hasHome || strings.Contains(code, "+") || strings.Contains(code, "join(")) {
			continue
		}
		for _, l := range lits {
			// (A whole path, 'config/.env', is judged as a literal path.)
			if t := strings.Trim(l.text, "/"); t != "" && len(t) < 64 && containsAny("/"+t+"/", sensitivePieces) && !strings.ContainsAny(t, " \n") && !literalPath(l.text) {
				m.unknown(p.lang + " code builds a path at run time from pieces of one that matters: " + clipText(l.text, 60))
				break
			}
		}
	}
}

// pieceUse tells from the code before and after a built path whether it
// is read, written or deleted.
func pieceUse(before, after string) int {
	for _, d := range []string{"rmtree", "remove(", "unlink", "rmSync", "rmdir", "rm_rf", "rm(", "File.delete", "FileUtils.rm", "rimraf", "shred"} {
		if strings.Contains(before, d) {
			return kDelete
		}
	}
	for _, w := range []string{"writeFile", "appendFile", "write_text", "write_bytes", "file_put_contents", "createWriteStream", "File.write", "copyFile", "symlink", "open(", ">"} {
		if strings.Contains(before, w) {
			a := strings.TrimLeft(after, ") ")
			a = strings.TrimLeft(a, ",")
			a = strings.TrimLeft(a, " '\"")
			if w != "open(" && w != ">" || strings.HasPrefix(a, "w") || strings.HasPrefix(a, "a") || w == ">" && strings.Contains(before, "open(") {
				return kWrite
			}
		}
	}
	return kRead
}
