package hookrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/opx-dev/opx/cli/internal/daemon"
	"github.com/opx-dev/opx/engine/registry"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// engineClient is a connection to the workspace's running engine's
// HookService.
type engineClient struct {
	conn  *grpc.ClientConn
	hooks opxv1.HookServiceClient
	ctx   context.Context // carries the client token
}

func (ec *engineClient) Close() error { return ec.conn.Close() }

// attach connects to the engine of workspace ws (absolute and
// symlink-free), starting one in the background first if none runs (with
// Options.Program). What it says goes to the notes: stdout is the CLI's.
func (h *run) attach(ctx context.Context, ws string) (*engineClient, error) {
	dir, err := stateDir(ws)
	if err != nil {
		return nil, err
	}
	e, tok, err := registry.Lookup(dir)
	if errors.Is(err, registry.ErrNotRunning) {
		program := h.o.Program
		if program == nil {
			program = os.Executable
		}
		opx, perr := program()
		if perr != nil {
			return nil, perr
		}
		fmt.Fprintf(h.notes, "opx hook: no engine runs for %s; starting one in the background\n", ws)
		if err := daemon.Start(h.notes, opx, ws, dir); err != nil && !errors.Is(err, registry.ErrRunning) {
			// Another hook may have started one meanwhile (this one's
			// manager then refused to be a second): the registry says.
			if _, _, lerr := registry.Lookup(dir); lerr != nil && !errors.Is(lerr, registry.ErrStarting) {
				return nil, err
			}
		}
		e, tok, err = registry.Lookup(dir)
	}
	if errors.Is(err, registry.ErrStarting) {
		if err := daemon.Wait(ctx, dir); err != nil {
			return nil, err
		}
		e, tok, err = registry.Lookup(dir)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ws, err)
	}
	return h.connect(ctx, e, tok)
}

// connect connects to the engine e with the client token tok. The engine
// listens on loopback only.
func (h *run) connect(ctx context.Context, e registry.Entry, tok string) (*engineClient, error) {
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	client := h.o.Client
	if client == "" {
		client = "opx hook"
	}
	ctx = metadata.AppendToOutgoingContext(ctx, opxv1.ClientTokenHeader, tok, "opx-client", client)
	return &engineClient{conn: conn, hooks: opxv1.NewHookServiceClient(conn), ctx: ctx}, nil
}

// Opx is the opx binary the opx-hook binary starts an engine with: the
// executable opx in the directory of the running one (they are built and
// installed together), else opx on $PATH.
func Opx() (string, error) {
	self, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(self), "opx")
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return p, nil
		}
	}
	p, err := exec.LookPath("opx")
	if err != nil {
		return "", fmt.Errorf("%w: none beside %s, none on $PATH (build both: go build -o DIR ./cli/opx ./cli/opx-hook)", errNoProgram, self)
	}
	return filepath.Abs(p)
}
