package natsrvtest

import (
	"testing"

	"github.com/opx-dev/opx/fleet/natsrv"
)

// Start starts a single embedded server with its store in a temporary
// directory, shut down when the test ends.
func Start(t testing.TB) *natsrv.Server {
	t.Helper()
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	return srv
}
