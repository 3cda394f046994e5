package mcp

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/opx-dev/opx/internal/regularfile"
)

// maxCodeHashBytes bounds what codeHash reads of one file; past it the
// file is known by its size and modification time.
const maxCodeHashBytes = 64 << 20

// ErrCodeChanged is returned by the Manager when a server's code changed
// since its first start in this engine: it is not restarted (review #3),
// since what now runs would not be what was configured and started.
var ErrCodeChanged = errors.New("the MCP server's code changed since it first started")

// codeHash identifies a server's code as it would be started now: the
// content of its program and of the files its arguments name (relative
// ones in the workspace, its working directory).
func codeHash(spec Spec) (string, error) {
	if len(spec.Argv) == 0 {
		return "", fmt.Errorf("%w: no command", ErrInvalidSpec)
	}
	lookup := spec.Env["PATH"]
	if lookup == "" {
		lookup = os.Getenv("PATH")
	}
	prog, err := resolveProgram(spec.Argv[0], lookup)
	if err != nil {
		return "", err
	}
	h := blake3.New()
	files := []string{prog}
	for _, a := range spec.Argv[1:] {
		if a == "" || strings.HasPrefix(a, "-") || len(a) > 4096 {
			continue
		}
		if !filepath.IsAbs(a) {
			a = filepath.Join(spec.Workspace, a)
		}
		files = append(files, filepath.Clean(a))
	}
	for _, f := range files {
		fmt.Fprintf(h, "%s\x00", f)
		// Opened as a regular file only: a FIFO swapped in after a stat
		// would block the engine's open.
		r, err := regularfile.Open(f)
		if err != nil {
			continue // not a file (now): its absence is part of the hash
		}
		st, err := r.Stat()
		if err != nil {
			r.Close()
			return "", err
		}
		fmt.Fprintf(h, "%d:%o\x00", st.Size(), st.Mode())
		if st.Size() > maxCodeHashBytes {
			fmt.Fprintf(h, "%d\x00", st.ModTime().UnixNano())
			r.Close()
			continue
		}
		_, err = io.Copy(h, io.LimitReader(r, maxCodeHashBytes))
		r.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
