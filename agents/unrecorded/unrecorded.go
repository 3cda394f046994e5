package unrecorded

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/opx-dev/opx/internal/textclip"
)

// File is the name of the file in the workspace's state directory.
const File = "hooks-unrecorded.jsonl"

// Bounds.
const (
	// MaxFileBytes is the most Append lets the file grow to.
	MaxFileBytes = 8 << 20
	// MaxInputBytes is the most of a tool input a line keeps.
	MaxInputBytes = 4 << 10
	// MaxLineBytes bounds one line: the input and the short fields
	// (hookproto bounds ids, names and paths), with room to spare.
	MaxLineBytes = 64 << 10
)

// Line is one call the hook answered without an engine. Its JSON fields
// are exactly ledger/event.HookUnrecorded's.
type Line struct {
	Agent          string `json:"agent"`
	AgentSessionID string `json:"agent_session_id,omitempty"`
	Name           string `json:"name"`
	AgentTool      string `json:"agent_tool,omitempty"`
	// Input is the tool input, cut to MaxInputBytes.
	Input string `json:"input,omitempty"`
	Cwd   string `json:"cwd,omitempty"`
	// At is when the hook answered, RFC 3339 with nanoseconds.
	At       string `json:"at"`
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// valid reports whether l has the fields every line must have.
func (l *Line) valid() bool {
	return l.Agent != "" && l.Name != "" && l.At != "" && l.Decision != "" && l.Reason != ""
}

// Append writes l as one line at the end of the file at path, creating
// it (0600) if need be. The input is cut to MaxInputBytes first.
func Append(path string, l Line) error {
	l.Input = textclip.Cut(l.Input, MaxInputBytes)
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("write down a call: %w", err)
	}
	b = append(b, '\n')
	if len(b) > MaxLineBytes {
		return fmt.Errorf("write down a call: a line of %d bytes, more than %d", len(b), MaxLineBytes)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0o600)
	if err != nil {
		return refused(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	// Two hooks may both pass this check and write: the file then ends a
	// line or two past the bound, still bounded.
	if fi.Size()+int64(len(b)) > MaxFileBytes {
		return fmt.Errorf("%s: %w: it holds %d bytes (at most %d)", path, ErrFull, fi.Size(), MaxFileBytes)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("write down a call in %s: %w", path, err)
	}
	return f.Close()
}

// Read returns the well-formed lines of the file at path, in order, and
// how many lines it skipped as malformed. It reads at most max bytes:
// past them it returns the lines before the bound with ErrTooLarge. A
// missing file is an error that wraps os.ErrNotExist.
func Read(path string, max int64) (lines []Line, malformed int, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, 0, refused(path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: %w", path, ErrNotRegular)
	}
	r := bufio.NewReaderSize(io.LimitReader(f, max+1), 64<<10)
	var read int64
	for {
		line, n, long, rerr := readLine(r)
		read += int64(n)
		if read > max {
			return lines, malformed, fmt.Errorf("%s: %w: more than %d bytes", path, ErrTooLarge, max)
		}
		if long || len(bytes.TrimSpace(line)) > 0 {
			var l Line
			if long || json.Unmarshal(line, &l) != nil || !l.valid() {
				malformed++
			} else {
				lines = append(lines, l)
			}
		}
		if rerr == io.EOF {
			return lines, malformed, nil
		}
		if rerr != nil {
			return lines, malformed, fmt.Errorf("read %s: %w", path, rerr)
		}
	}
}

// readLine reads one line (its newline included) and returns it if it
// is at most MaxLineBytes; a longer one is read to its end (n counts its
// bytes), not kept, and reported long.
func readLine(r *bufio.Reader) (line []byte, n int, long bool, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		n += len(chunk)
		if !long && len(line)+len(chunk) <= MaxLineBytes {
			line = append(line, chunk...)
		} else {
			long, line = true, nil
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, n, long, err
		}
	}
}

// refused says why path could not be opened; a symlink (O_NOFOLLOW's
// ELOOP) is ErrNotRegular.
func refused(path string, err error) error {
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("%s is a symbolic link: %w", path, ErrNotRegular)
	}
	return err
}
