package main_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// wantRefusedPublish publishes m on the server at url as an engine
// connects (no credentials) and waits for the server to refuse it
// (a permissions violation), failing the test when it is taken.
func wantRefusedPublish(t *testing.T, url string, m *nats.Msg) {
	t.Helper()
	refused := make(chan string, 16)
	nc, err := nats.Connect(url, nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) {
		if errors.Is(err, nats.ErrPermissionViolation) {
			select {
			case refused <- err.Error():
			default:
			}
		}
	}))
	if err != nil {
		t.Fatalf("connecting as an engine does: %v", err)
	}
	defer nc.Close()
	if err := nc.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	// A flush is answered after the server handled the publish: a server
	// that took it says nothing more; one that refused it said so first.
	if err := nc.FlushTimeout(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case e := <-refused:
			if strings.Contains(e, `"`+m.Subject+`"`) {
				return
			}
		case <-deadline:
			t.Fatalf("the embedded server took an engine's publish on %s", m.Subject)
		}
	}
}
