package executor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/sys/unix"
)

// GroupFiles is the tool group of the file tools.
const GroupFiles = "files"

// MaxReadBytes caps what read_file returns.
const MaxReadBytes = 256 << 10

// MaxListEntries caps what list_directory returns.
const MaxListEntries = 1000

// Files implements the read-only file tools: read_file, list_directory.
type Files struct {
	ws *Workspace
}

// NewFiles returns the file tools for a workspace.
func NewFiles(ws *Workspace) *Files { return &Files{ws: ws} }

// Tools implements Executor.
func (f *Files) Tools() []ToolDef {
	return []ToolDef{
		{Name: "read_file", Group: GroupFiles, Description: "Read a UTF-8 text file in the workspace. Paths are relative to the workspace root.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"file path relative to the workspace"}},"required":["path"],"additionalProperties":false}`)},
		{Name: "list_directory", Group: GroupFiles, Description: "List a directory in the workspace: one entry per line, directories end in /.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"directory relative to the workspace; . for the root"}},"required":["path"],"additionalProperties":false}`)},
	}
}

// Execute implements Executor.
func (f *Files) Execute(ctx context.Context, c Call) Result {
	var a struct {
		Path string `json:"path"`
	}
	if err := decodeArgs(c.Args, &a); err != nil {
		return Errorf("%s: %v", c.Tool, err)
	}
	switch c.Tool {
	case "read_file":
		return f.readFile(a.Path, c.Judged(a.Path))
	case "list_directory":
		return f.listDirectory(a.Path, c.Judged(a.Path))
	}
	return Errorf("files executor has no tool %q", c.Tool)
}

// readFile reads path, opened as judged (Call.Judged) following no
// symlink: a link swapped in after the verdict is refused.
func (f *Files) readFile(path, judged string) Result {
	fh, err := f.ws.Strict().Open(judged, unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	if err != nil {
		return Errorf("read_file: %v", err)
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return Errorf("read_file: %s: %v", path, err)
	}
	if !st.Mode().IsRegular() {
		return Errorf("read_file: %s is not a regular file (%s)", path, st.Mode().Type())
	}
	buf, err := io.ReadAll(io.LimitReader(fh, MaxReadBytes+1))
	if err != nil {
		return Errorf("read_file: %s: %v", path, err)
	}
	r := Result{}
	if len(buf) > MaxReadBytes {
		buf = buf[:MaxReadBytes]
		for len(buf) > 0 && !utf8.Valid(buf) && !utf8.RuneStart(buf[len(buf)-1]) {
			buf = buf[:len(buf)-1]
		}
		r.Truncated = true
	}
	if !utf8.Valid(buf) || bytes.IndexByte(buf, 0) >= 0 {
		return Errorf("read_file: %s looks binary (%d bytes); only text files can be read", path, st.Size())
	}
	r.Content = string(buf)
	if r.Truncated {
		r.Content += fmt.Sprintf("\n[truncated: showing %d of %d bytes]", len(buf), st.Size())
	}
	return r
}

func (f *Files) listDirectory(path, judged string) Result {
	fh, err := f.ws.Strict().Open(judged, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return Errorf("list_directory: %v", err)
	}
	defer fh.Close()
	ents, err := fh.ReadDir(-1)
	if err != nil {
		return Errorf("list_directory: %s: %v", path, err)
	}
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	sort.Strings(names)
	r := Result{}
	if len(names) > MaxListEntries {
		r.Truncated = true
		names = append(names[:MaxListEntries], fmt.Sprintf("[truncated: %d of %d entries]", MaxListEntries, len(ents)))
	}
	r.Content = strings.Join(names, "\n")
	if r.Content != "" {
		r.Content += "\n"
	}
	return r
}
