package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/opx-dev/opx/internal/regularfile"
)

// End is how an engine process ended, as the process that saw it end
// (its manager, which waited for it) or that signalled it (a manager or
// `opx stop` stopping an engine whose manager is gone) wrote it down in
// "engine.end.json". The next engine reads it once (TakeEnd) and records
// it in its engine.crashed when it is about the run that died.
//
// What cannot be known: the kernel tells a parent which signal ended its
// child, never who sent it (waitid's si_pid for CLD_KILLED is the child's
// own pid). So Sender is SenderManager (or SenderStop) only for a signal
// this program sent itself, recorded before it was sent; a signal it did
// not send is SenderUnknown: another process, the kernel's OOM killer,
// a resource limit.
type End struct {
	PID int `json:"pid"`
	// Start is the process's start time (StartTime) when known, so the
	// note is never taken for another process that reused the pid.
	Start uint64 `json:"start,omitempty"`
	// ExitCode is the exit status of an engine that exited (-1 when a
	// signal ended it); Signal names that signal ("SIGKILL").
	ExitCode int    `json:"exit_code"`
	Signal   string `json:"signal,omitempty"`
	// Sender says who sent Signal: SenderManager, SenderStop or
	// SenderUnknown. SenderPID is the sender's pid when it is one of ours.
	Sender    string `json:"sender,omitempty"`
	SenderPID int    `json:"sender_pid,omitempty"`
	// Reason is why the sender sent it.
	Reason string `json:"reason,omitempty"`
	// Sent marks a note written before the signal was sent, not yet
	// confirmed by the engine's end (it stays so when nobody could wait
	// for that engine: an orphan).
	Sent bool `json:"sent,omitempty"`
}

// The senders of an End's signal.
const (
	SenderManager = "manager"  // the engine's own process manager
	SenderStop    = "opx-stop" // `opx stop` or a new manager stopping an orphaned engine
	SenderUnknown = "unknown"  // not opx: the kernel does not say who
)

// maxEndBytes bounds the end note read back; opx writes a few hundred bytes.
const maxEndBytes = 16 << 10

// maxEndReason bounds the reason kept in a note.
const maxEndReason = 500

// WriteEnd writes e as the workspace's end note, atomically, 0600,
// replacing any earlier note.
func WriteEnd(dir Dir, e End) error {
	if len(e.Reason) > maxEndReason {
		e.Reason = e.Reason[:maxEndReason]
	}
	e.Reason = strings.ToValidUTF8(e.Reason, "?") // a rune cut above becomes one byte
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return writeFile(dir.path("engine.end.json"), append(b, '\n'))
}

// ReadEnd reads the workspace's end note; the engine that records it
// removes it then (RemoveEnd), so it is used once. ok is false when
// there is none; a note that is not one opx wrote (not a regular file,
// too large, not JSON, a pid that is not positive, an unknown sender)
// is removed and reported as an error.
func ReadEnd(dir Dir) (e End, ok bool, err error) {
	path := dir.path("engine.end.json")
	b, err := regularfile.Read(path, maxEndBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return End{}, false, nil
	}
	defer func() {
		if err != nil {
			os.Remove(path)
		}
	}()
	if err != nil {
		return End{}, false, fmt.Errorf("engine end note: %w", err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return End{}, false, fmt.Errorf("engine end note: %w", err)
	}
	switch e.Sender {
	case "", SenderManager, SenderStop, SenderUnknown:
	default:
		return End{}, false, fmt.Errorf("engine end note: unknown sender %q", clipNote(e.Sender))
	}
	if e.PID <= 0 || e.SenderPID < 0 {
		return End{}, false, fmt.Errorf("engine end note: bad pid %d", e.PID)
	}
	if len(e.Signal) > 32 || len(e.Reason) > maxEndReason || !utf8.ValidString(e.Signal+e.Reason) {
		return End{}, false, errors.New("engine end note: signal or reason too long or not UTF-8")
	}
	return e, true, nil
}

// RemoveEnd removes the workspace's end note.
func RemoveEnd(dir Dir) { os.Remove(dir.path("engine.end.json")) }

func clipNote(s string) string {
	if len(s) > 32 {
		return s[:32] + "..."
	}
	return s
}
