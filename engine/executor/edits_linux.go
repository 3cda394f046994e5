package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// Edits implements the file tools that change the workspace: write_file,
// edit_file, delete_file, move_file and make_dir. Every one is mutating:
// Chronicle snapshots the paths Touches names before it runs.
type Edits struct {
	ws *Workspace
}

// NewEdits returns the editing tools for a workspace.
func NewEdits(ws *Workspace) *Edits { return &Edits{ws: ws} }

type editArgs struct {
	Path       string `json:"path"`
	Content    string `json:"content"`
	Old        string `json:"old"`
	New        string `json:"new"`
	ReplaceAll bool   `json:"replace_all"`
	From       string `json:"from"`
	To         string `json:"to"`
}

func schema(props string, required ...string) json.RawMessage {
	req, _ := json.Marshal(required)
	return json.RawMessage(`{"type":"object","properties":{` + props + `},"required":` + string(req) + `,"additionalProperties":false}`)
}

const pathProp = `"path":{"type":"string","description":"path relative to the workspace"}`

// Tools implements Executor.
func (e *Edits) Tools() []ToolDef {
	return []ToolDef{
		{Name: "write_file", Group: GroupFiles, Mutating: true, Description: "Create or replace a text file in the workspace with the given content.",
			InputSchema: schema(pathProp+`,"content":{"type":"string"}`, "path", "content")},
		{Name: "edit_file", Group: GroupFiles, Mutating: true, Description: "Replace an exact piece of text in a file. old must occur exactly once unless replace_all is true.",
			InputSchema: schema(pathProp+`,"old":{"type":"string"},"new":{"type":"string"},"replace_all":{"type":"boolean"}`, "path", "old", "new")},
		{Name: "delete_file", Group: GroupFiles, Mutating: true, Description: "Delete a file (or an empty directory) in the workspace.",
			InputSchema: schema(pathProp, "path")},
		{Name: "move_file", Group: GroupFiles, Mutating: true, Description: "Move or rename a file inside the workspace; the target must not exist.",
			InputSchema: schema(`"from":{"type":"string"},"to":{"type":"string"}`, "from", "to")},
		{Name: "make_dir", Group: GroupFiles, Mutating: true, Description: "Create a directory (and missing parents) in the workspace.",
			InputSchema: schema(pathProp, "path")},
	}
}

// Touches implements Toucher.
func (e *Edits) Touches(c Call) ([]string, error) {
	var a editArgs
	if err := decodeArgs(c.Args, &a); err != nil {
		return nil, err
	}
	switch c.Tool {
	case "move_file":
		// A directory moves with everything in it: each path beneath it
		// is snapshotted where it was, and where it goes (absent), so
		// the move can be undone path by path.
		from, to := path.Clean(a.From), path.Clean(a.To)
		below, err := e.subtree(from)
		if err != nil {
			return nil, err
		}
		out := []string{from, to}
		for _, p := range below {
			out = append(out, p, to+strings.TrimPrefix(p, from))
		}
		return out, nil
	case "make_dir":
		// Every missing parent is created too.
		var out []string
		for p := path.Clean(a.Path); p != "." && p != "/"; p = path.Dir(p) {
			out = append([]string{p}, out...)
		}
		return out, nil
	default:
		return []string{path.Clean(a.Path)}, nil
	}
}

// maxMoveEntries bounds what one move_file may carry: each path is
// snapshotted before the move.
const maxMoveEntries = 100000

// subtree lists the paths beneath rel if it is a directory (not following
// symlinks), nil otherwise.
func (e *Edits) subtree(rel string) ([]string, error) {
	strict := e.ws.Strict()
	st, err := strict.Lstat(rel)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, nil // not a directory (or absent): the move says why
	}
	var out []string
	var walk func(dir string) error
	walk = func(dir string) error {
		var dirs []string
		err := strict.ReadDirStatFunc(dir, func(name []byte, st *unix.Stat_t) {
			p := dir + "/" + string(name)
			out = append(out, p)
			if st.Mode&unix.S_IFMT == unix.S_IFDIR {
				dirs = append(dirs, p)
			}
		})
		for _, d := range dirs {
			if err != nil || len(out) > maxMoveEntries {
				break
			}
			err = walk(d)
		}
		return err
	}
	if err := walk(rel); err != nil {
		return nil, err
	}
	if len(out) > maxMoveEntries {
		return nil, fmt.Errorf("%s holds more than %d paths: too many to move with move_file", rel, maxMoveEntries)
	}
	return out, nil
}

// Execute implements Executor.
func (e *Edits) Execute(ctx context.Context, c Call) Result {
	var a editArgs
	if err := decodeArgs(c.Args, &a); err != nil {
		return Errorf("%s: %v", c.Tool, err)
	}
	var err error
	var msg string
	switch c.Tool {
	case "write_file":
		if len(a.Content) > MaxWriteBytes {
			return Errorf("write_file: %d bytes is over the %d byte limit", len(a.Content), MaxWriteBytes)
		}
		mode := uint32(0o644)
		if st, serr := e.ws.Lstat(a.Path); serr == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			mode = st.Mode & 0o7777
		}
		err = e.ws.WriteFile(a.Path, []byte(a.Content), mode)
		msg = fmt.Sprintf("wrote %d bytes to %s", len(a.Content), a.Path)
	case "edit_file":
		msg, err = e.edit(a)
	case "delete_file":
		st, serr := e.ws.Lstat(a.Path)
		if serr != nil {
			return Errorf("delete_file: %v", serr)
		}
		err = e.ws.Remove(a.Path, st.Mode&unix.S_IFMT == unix.S_IFDIR)
		msg = "deleted " + a.Path
	case "move_file":
		err = e.ws.Rename(a.From, a.To)
		msg = fmt.Sprintf("moved %s to %s", a.From, a.To)
	case "make_dir":
		err = e.ws.Mkdir(a.Path, 0o755)
		msg = "created directory " + a.Path
	default:
		return Errorf("edits executor has no tool %q", c.Tool)
	}
	if err != nil {
		return Errorf("%s: %v", c.Tool, err)
	}
	return Result{Content: msg}
}

func (e *Edits) edit(a editArgs) (string, error) {
	if a.Old == "" {
		return "", errors.New("old must not be empty")
	}
	// The file is read as it is then written (WriteFile): through real
	// directories only, so the edit cannot read what a link points to.
	f, err := e.ws.Strict().Open(a.Path, unix.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		f.Close()
		return "", &PathError{Path: a.Path, Reason: "not a regular file"}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxWriteBytes+1))
	f.Close()
	if err != nil {
		return "", err
	}
	if len(b) > MaxWriteBytes {
		return "", fmt.Errorf("%s is over the %d byte limit", a.Path, MaxWriteBytes)
	}
	n := bytes.Count(b, []byte(a.Old))
	switch {
	case n == 0:
		return "", fmt.Errorf("the text to replace does not occur in %s", a.Path)
	case n > 1 && !a.ReplaceAll:
		return "", fmt.Errorf("the text to replace occurs %d times in %s; give more context or set replace_all", n, a.Path)
	}
	out := bytes.Replace(b, []byte(a.Old), []byte(a.New), -1)
	if len(out) > MaxWriteBytes {
		return "", fmt.Errorf("the result is over the %d byte limit", MaxWriteBytes)
	}
	if err := e.ws.WriteFile(a.Path, out, st.Mode&0o7777); err != nil {
		return "", err
	}
	return fmt.Sprintf("replaced %d occurrence(s) in %s", n, a.Path), nil
}
