package undo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/opx-dev/opx/chronicle"
	"github.com/opx-dev/opx/engine/executor"
	"github.com/opx-dev/opx/ledger"
)

// RecoveredRollback is the outcome recovery recorded for an interrupted
// rollback.
type RecoveredRollback struct {
	Plan     uint64 // its chronicle.rollback_started
	Rollback uint64 // the chronicle.rollback recovery recorded
}

// RecoverRollbacks records how every interrupted rollback left the
// workspace: for each rollback plan with no outcome (the engine or opx
// rollback died while carrying it out), a chronicle.rollback marked
// interrupted whose post-states are measured from disk now
// (chronicle.Recover). The engine runs it at start, before engine.started,
// and opx rollback before it changes anything, so that no rollback's
// effects stay off the record. It returns what it recorded.
//
// Only workspace, the directory the caller works on, is ever read or
// changed: a plan's workspace comes from the ledger, which may have been
// imported from elsewhere or name a directory that has moved. A plan for
// another directory is recorded as interrupted and not measured; with
// workspace "" (no workspace in use) plans are left open for a process
// that has one.
func RecoverRollbacks(ctx context.Context, l *ledger.Ledger, rec chronicle.Recorder, workspace string) ([]RecoveredRollback, error) {
	plans, err := chronicle.OpenPlans(l)
	if err != nil {
		return nil, fmt.Errorf("find interrupted rollbacks: %w", err)
	}
	var out []RecoveredRollback
	for _, p := range plans {
		if workspace == "" {
			continue
		}
		seq, err := recoverOne(ctx, p, rec, workspace)
		if err != nil {
			return out, fmt.Errorf("record the interrupted rollback planned at %d: %w", p.Seq, err)
		}
		out = append(out, RecoveredRollback{Plan: p.Seq, Rollback: seq})
	}
	return out, nil
}

func recoverOne(ctx context.Context, p chronicle.OpenPlan, rec chronicle.Recorder, workspace string) (uint64, error) {
	if !sameDir(p.Workspace, workspace) {
		return chronicle.Recover(ctx, p, nil, []string{fmt.Sprintf(
			"not measured: the plan names the workspace %s and this process works on %s; nothing there was read or removed", p.Workspace, workspace)}, rec)
	}
	ws, err := executor.OpenWorkspace(workspace)
	if err != nil {
		return chronicle.Recover(ctx, p, nil, []string{fmt.Sprintf("the workspace %s could not be opened to measure it: %v", p.Workspace, err)}, rec)
	}
	defer ws.Close()
	fsys := WorkspaceFS(ws)
	var notes []string
	if removed, err := removeTemporaries(fsys, p); err != nil {
		notes = append(notes, "looking for temporary files it left: "+err.Error())
	} else if len(removed) > 0 {
		notes = append(notes, fmt.Sprintf("removed %d temporary file(s) its unfinished writes left: %s", len(removed), strings.Join(clipList(removed, 20), ", ")))
	}
	return chronicle.Recover(ctx, p, fsys, notes, rec)
}

// removeTemporaries removes, from each directory a plan writes into, the
// temporary files an atomic write that never reached its rename leaves
// (executor.Workspace names them .opx-tmp- and 12 hex digits): they hold
// content the rollback meant to write and are in no one's record.
func removeTemporaries(fsys chronicle.Workspace, p chronicle.OpenPlan) ([]string, error) {
	dirs := map[string]bool{}
	for _, f := range p.Files {
		dirs[path.Dir(f.Path)] = true
	}
	var removed []string
	for dir := range dirs {
		ents, err := fsys.ReadDirStat(dir)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return removed, fmt.Errorf("%s: %w", dir, err)
		}
		for _, e := range ents {
			if !isTemporary(e) {
				continue
			}
			rel := path.Join(dir, e.Name)
			if err := fsys.Remove(rel, false); err != nil {
				return removed, fmt.Errorf("remove %s: %w", rel, err)
			}
			removed = append(removed, rel)
		}
	}
	sort.Strings(removed)
	return removed, nil
}

func isTemporary(e chronicle.Stat) bool {
	const prefix = ".opx-tmp-"
	hex := strings.TrimPrefix(e.Name, prefix)
	return e.Mode.IsRegular() && len(hex) == 12 && len(e.Name) == len(prefix)+12 && strings.Trim(hex, "0123456789abcdef") == ""
}

// sameDir reports whether a and b name the same directory: the same
// cleaned path, or, when both exist, the same inode.
func sameDir(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && fa.IsDir() && os.SameFile(fa, fb)
}
