package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// commandSecrets are files beneath the system directories that no command
// may read, as glob patterns. Their modes keep other users out, but not a
// command the engine runs as root: even without capabilities, uid 0 owns
// them. Landlock only grants, so a system directory that holds one is
// granted entry by entry, without it (see systemRules).
var commandSecrets = []string{
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
	"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
	"/etc/ssh/ssh_host_*_key", "/etc/ssl/private",
}

// systemRules grants read and execute beneath dirs, except for what
// matches secrets: a directory that holds a match is granted entry by
// entry (recursively where a match lies deeper), and its symbolic links
// are not granted at all, because a rule follows a link to its target;
// a command that opens one still reaches the target where that is
// granted on its own. Missing directories are skipped.
func systemRules(dirs, secrets []string) ([]landlock.Rule, error) {
	var rules []landlock.Rule
	var whole []string
	var walk func(dir string) error
	walk = func(dir string) error {
		if !holdsSecret(dir, secrets) {
			whole = append(whole, dir)
			return nil
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("system directory %s: %w", dir, err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			switch {
			case isSecret(p, secrets) || e.Type()&os.ModeSymlink != 0:
			case e.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case e.Type().IsRegular():
				rules = append(rules, landlock.ROFiles(p))
			}
			// Sockets, FIFOs and devices beneath /etc are left out.
		}
		return nil
	}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue // usrmerge systems have no /lib32, not all have /opt
		}
		if err := walk(d); err != nil {
			return nil, err
		}
	}
	if len(whole) > 0 {
		rules = append(rules, landlock.RODirs(whole...))
	}
	return rules, nil
}

// isSecret reports whether p matches one of secrets.
func isSecret(p string, secrets []string) bool {
	for _, s := range secrets {
		if ok, _ := filepath.Match(s, p); ok {
			return true
		}
	}
	return false
}

// holdsSecret reports whether a secret may lie beneath dir.
func holdsSecret(dir string, secrets []string) bool {
	for _, s := range secrets {
		if strings.HasPrefix(filepath.Dir(s)+"/", dir+"/") {
			return true
		}
	}
	return false
}
