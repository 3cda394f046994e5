package cli

import (
	"context"
	"fmt"

	"github.com/opx-dev/opx/cli/internal/ledgerloc"
	"github.com/opx-dev/opx/engine"
	"github.com/opx-dev/opx/engine/registry"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"github.com/urfave/cli/v2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

// engineClient is a connection to the workspace's running engine.
type engineClient struct {
	entry  registry.Entry
	conn   *grpc.ClientConn
	client opxv1.ClientServiceClient
	ledger opxv1.LedgerServiceClient
	hooks  opxv1.HookServiceClient
	ctx    context.Context // carries the client token
}

// dialEngine finds the workspace's engine in the registry and connects to
// it with the client token. The engine listens on loopback only.
func dialEngine(c *cli.Context) (*engineClient, error) {
	ws, err := ledgerloc.WorkspaceDir(c)
	if err != nil {
		return nil, err
	}
	return dialWorkspace(c, ws)
}

// dialWorkspace is dialEngine for the workspace ws (absolute and
// symlink-free), whatever --workspace says.
func dialWorkspace(c *cli.Context, ws string) (*engineClient, error) {
	dir, err := ledgerloc.StateDir(ws)
	if err != nil {
		return nil, err
	}
	e, tok, err := registry.Lookup(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ws, err)
	}
	conn, err := grpc.NewClient(e.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	ctx := metadata.AppendToOutgoingContext(c.Context, engine.TokenHeader, tok, "opx-client", "opx "+c.Command.Name)
	return &engineClient{entry: e, conn: conn, client: opxv1.NewClientServiceClient(conn),
		ledger: opxv1.NewLedgerServiceClient(conn), hooks: opxv1.NewHookServiceClient(conn), ctx: ctx}, nil
}

func (ec *engineClient) Close() error { return ec.conn.Close() }
