package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// A command the engine runs as root keeps uid 0 (see dropPrivileges), and
// uid 0 owns the system's secrets: /etc/shadow is 0640 root, so its owner
// reads it without any capability. Landlock only grants, so beneath the
// directories where secrets live (commandWalkedDirs) a command is granted
// only what every user of the machine may read: a directory is granted
// whole when everything beneath it is readable by others, else entry by
// entry, leaving out each file others may not read and each directory
// others may not enter and list. commandSecrets are left out whatever
// their modes. The other system directories hold programs and libraries
// and are granted whole.
var (
	commandWalkedDirs = []string{"/etc"}
	commandSecrets    = []string{
		"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
		"/etc/sudoers", "/etc/sudoers.d", "/etc/security/opasswd",
		"/etc/ssh/ssh_host_*_key", "/etc/ssl/private",
	}
)

// systemRules grants read and execute beneath dirs: whole, or, for the
// walked ones, as described above. Symbolic links found while granting
// entry by entry are not granted (a rule follows a link to its target); a
// command that opens one still reaches the target where that is granted
// on its own. Missing directories are skipped.
func systemRules(dirs, walked, secrets []string) ([]landlock.Rule, error) {
	var wholeDirs, files []string
	// grant adds the rules for dir and reports whether all of it may be
	// granted whole, in which case it adds nothing and the caller does.
	var grant func(dir string) (bool, error)
	grant = func(dir string) (bool, error) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return false, fmt.Errorf("system directory %s: %w", dir, err)
		}
		type entry struct {
			path string
			dir  bool
		}
		var public []entry
		whole := true
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if e.Type()&fs.ModeSymlink != 0 {
				public = append(public, entry{p, false}) // granted with its directory only
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue // removed meanwhile
			}
			if isSecret(p, secrets) || !readableByOthers(info) {
				whole = false
				continue
			}
			if info.IsDir() {
				sub, err := grant(p)
				if err != nil {
					return false, err
				}
				if !sub {
					whole = false
					continue
				}
			}
			public = append(public, entry{p, info.IsDir()})
		}
		if whole {
			return true, nil
		}
		for _, e := range public {
			switch {
			case e.dir:
				wholeDirs = append(wholeDirs, e.path)
			default:
				if st, err := os.Lstat(e.path); err == nil && st.Mode().IsRegular() {
					files = append(files, e.path)
				}
			}
		}
		return false, nil
	}
	for _, d := range dirs {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			continue // usrmerge systems have no /lib32, not all have /opt
		}
		if !slices.Contains(walked, d) {
			wholeDirs = append(wholeDirs, d)
			continue
		}
		whole, err := grant(d)
		if err != nil {
			return nil, err
		}
		if whole {
			wholeDirs = append(wholeDirs, d)
		}
	}
	var rules []landlock.Rule
	if len(wholeDirs) > 0 {
		rules = append(rules, landlock.RODirs(wholeDirs...))
	}
	if len(files) > 0 {
		rules = append(rules, landlock.ROFiles(files...))
	}
	return rules, nil
}

// readableByOthers reports whether a user who neither owns info's file
// nor is in its group may read it (a directory: enter and list it).
func readableByOthers(info fs.FileInfo) bool {
	if info.IsDir() {
		return info.Mode().Perm()&0o005 == 0o005
	}
	return info.Mode().Perm()&0o004 != 0
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
