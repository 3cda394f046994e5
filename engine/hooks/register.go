package hooks

import (
	"github.com/opx-dev/opx/engine"
	opxv1 "github.com/opx-dev/opx/proto/opx/v1"
	"google.golang.org/grpc"
)

// Linked in, the package gives each engine its hook sessions.
func init() {
	engine.UseHooks(func() engine.Hooks { return newSessions() })
}

// Bind gives the sessions their engine (engine.Hooks).
func (h *sessions) Bind(e *engine.Engine) { h.e = e }

// Register serves HookService (engine.Hooks).
func (h *sessions) Register(srv *grpc.Server) { opxv1.RegisterHookServiceServer(srv, &service{h: h}) }
