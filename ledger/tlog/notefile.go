package tlog

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/opx-dev/opx/internal/regularfile"
)

// WriteNote replaces dir's NoteFile with note, atomically: written to a
// temporary file beside it, fsynced, renamed over it, and the directory
// fsynced, so a reader sees the old note or the new one, never a mix.
// The note is public (mode 0644).
func WriteNote(dir, note string) error {
	tmp, err := os.CreateTemp(dir, ".checkpoint-*")
	if err != nil {
		return fmt.Errorf("write checkpoint note: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	_, err = tmp.WriteString(note)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, NoteFile))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("write checkpoint note: %w", err)
	}
	return nil
}

// ReadNote reads a checkpoint note from the regular file at path, at most
// MaxNoteBytes of it.
func ReadNote(path string) ([]byte, error) {
	b, err := regularfile.Read(path, MaxNoteBytes)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	return b, nil
}
