package hookrun

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/opx-dev/opx/agents/hookproto"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
)

// Bounds of a transcript sent to the engine.
const (
	// maxTranscript is the most of a transcript file sent: past it,
	// its first bytes, marked truncated.
	maxTranscript = 64 << 20
	// transcriptChunk is the size of one TranscriptChunk's data.
	transcriptChunk = 1 << 20
)

// sendTranscript streams the agent's transcript file at path to the
// engine (HookService.Transcript), in chunks of transcriptChunk, the
// first naming the session. It is the user's own file, but its path came
// on stdin: only a regular file is read, never through a symlink at the
// end of the path, and at most maxTranscript bytes of it.
func sendTranscript(ec *engineClient, agent hookproto.Agent, session, path string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("transcript path %q is not absolute", path)
	}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_NOCTTY, 0)
	if errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("transcript %s is a symbolic link: not read", path)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("transcript %s is not a regular file: not read", path)
	}
	size := fi.Size()
	limit := min(size, maxTranscript)
	stream, err := ec.hooks.Transcript(ec.ctx)
	if err != nil {
		return err
	}
	buf := make([]byte, min(transcriptChunk, max(limit, 1)))
	var sent int64
	for first := true; first || sent < limit; first = false {
		// A file that shrinks while it is read ends early: the engine
		// sees fewer bytes than size without truncated.
		k, rerr := io.ReadFull(f, buf[:min(int64(len(buf)), limit-sent)])
		msg := &opxv1.TranscriptChunk{Data: buf[:k]}
		if first {
			msg.Agent, msg.AgentSessionId, msg.Path, msg.Size, msg.Truncated = string(agent), session, path, size, size > maxTranscript
		}
		// SendMsg has encoded the chunk when it returns: buf is free.
		if err := stream.Send(msg); err != nil {
			if _, cerr := stream.CloseAndRecv(); cerr != nil {
				err = cerr // the stream's own error, not io.EOF
			}
			return fmt.Errorf("send the transcript: %w", err)
		}
		sent += int64(k)
		if rerr != nil {
			if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
				break
			}
			return fmt.Errorf("read the transcript: %w", rerr)
		}
	}
	if _, err := stream.CloseAndRecv(); err != nil {
		return fmt.Errorf("store the transcript: %w", err)
	}
	return nil
}
