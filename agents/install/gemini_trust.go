package install

import (
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/agents/hookproto"
	"github.com/opx-dev/opx/internal/regularfile"
)

// geminiFolderTrusted reports whether Gemini CLI 0.61.0 trusts folder
// dir, as its checkPathTrust decides: GEMINI_CLI_TRUST_WORKSPACE and
// GEMINI_RESTRICTED_MODE first, then folder trust turned off in the user's
// settings (security.folderTrust.enabled, on by default), then the rule
// of trustedFolders.json with the longest path that covers dir
// (TRUST_FOLDER and TRUST_PARENT trust, DO_NOT_TRUST does not). In a folder
// it does not trust, Gemini CLI reads no settings hooks at all. When it
// does not trust dir, why says so and what to do.
func geminiFolderTrusted(dir string) (trusted bool, why string) {
	const how = "trust it in Gemini CLI (it asks on the first interactive run there), or set GEMINI_CLI_TRUST_WORKSPACE=true where it runs"
	if os.Getenv("GEMINI_RESTRICTED_MODE") == "true" || os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "false" {
		return false, "GEMINI_RESTRICTED_MODE or GEMINI_CLI_TRUST_WORKSPACE=false says it does not"
	}
	if os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		return true, ""
	}
	home, err := userDir(hookproto.Gemini)
	if err != nil {
		return true, "" // cannot tell: do not claim a problem
	}
	if user, err := readJSONObject(filepath.Join(home, "settings.json")); err == nil {
		if v, _ := lookup(user, "security", "folderTrust", "enabled"); v == false {
			return true, ""
		}
	}
	path := filepath.Join(home, "trustedFolders.json")
	if p := os.Getenv("GEMINI_CLI_TRUSTED_FOLDERS_PATH"); p != "" {
		path = p
	}
	rules, err := readJSONObject(path)
	if err != nil {
		return false, "no trustedFolders.json says it does (" + path + "): " + how
	}
	real := realPath(dir)
	best, level := -1, ""
	for _, m := range rules.members {
		l, _ := m.val.(string)
		eff := m.key
		if l == "TRUST_PARENT" {
			eff = filepath.Dir(m.key)
		}
		if within(realPath(eff), real) && len(m.key) > best {
			best, level = len(m.key), l
		}
	}
	switch level {
	case "TRUST_FOLDER", "TRUST_PARENT":
		return true, ""
	case "DO_NOT_TRUST":
		return false, path + " says DO_NOT_TRUST: " + how
	}
	return false, path + " does not name it: " + how
}

// readJSONObject reads a small JSON object file (Gemini CLI's own files,
// which may hold comments: such a file is an error here, and the caller
// treats it as unknown).
func readJSONObject(path string) (*object, error) {
	b, err := regularfile.Read(path, MaxSettingsBytes)
	if err != nil {
		return nil, err
	}
	return parseDocument(b)
}

// lookup follows keys through nested objects.
func lookup(o *object, keys ...string) (any, bool) {
	var v any = o
	for _, k := range keys {
		cur, ok := v.(*object)
		if !ok {
			return nil, false
		}
		if v, ok = cur.get(k); !ok {
			return nil, false
		}
	}
	return v, true
}

func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
