package engine

import (
	"errors"
	"testing"

	"github.com/opx-dev/opx/replay/rerun"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// failingReplay is a ReplayMode that notes why the rerun failed.
type failingReplay struct {
	ReplayMode
	err error
}

func (f *failingReplay) Recording() *rerun.Recording { return &rerun.Recording{Session: "ses_proxy"} }
func (f *failingReplay) Fail(err error)              { f.err = err }

// TestMCPProxies_NoneLinked: an engine built without engine/mcpproxy
// gives no session tools of its own, refuses every Proxy stream and fails
// the rerun of a proxy session, saying why. Not parallel: it swaps the
// registered maker.
func TestMCPProxies_NoneLinked(t *testing.T) {
	saved := newMCPProxies.get()
	defer UseMCPProxies(saved)
	UseMCPProxies(nil)

	p := makeMCPProxies()
	replay := &failingReplay{}
	p.Bind(&Engine{opts: Options{replay: replay}})
	if p.Tools("ses_proxy") != nil {
		t.Error("a session has tools of its own")
	}
	p.Stop("test")
	if err := p.Service().Proxy(nil); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("Proxy: %v, want FailedPrecondition", err)
	}
	p.Replay(t.Context())
	if !errors.Is(replay.err, errNoMCPProxy) {
		t.Errorf("the rerun failed with %v, want %v", replay.err, errNoMCPProxy)
	}
}
