package natsrv_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
)

// violations collects the permission violations the server reports to a
// client, so a test waits for the one it provoked instead of a timeout.
type violations struct {
	mu   sync.Mutex
	seen []string
	ch   chan struct{}
}

func (v *violations) handler(_ *nats.Conn, _ *nats.Subscription, err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) {
		return
	}
	v.mu.Lock()
	v.seen = append(v.seen, err.Error())
	v.mu.Unlock()
	select {
	case v.ch <- struct{}{}:
	default:
	}
}

// waitFor waits until the server has refused a publish on subject.
func (v *violations) waitFor(t *testing.T, subject string) {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		v.mu.Lock()
		for _, s := range v.seen {
			if strings.Contains(s, `"`+subject+`"`) {
				v.mu.Unlock()
				return
			}
		}
		v.mu.Unlock()
		select {
		case <-v.ch:
		case <-deadline:
			t.Fatalf("no permission violation for %s (seen %v)", subject, v.seen)
		}
	}
}

// Issue 24 #1: on a guarded server (opx collector --embedded-nats) a
// client without credentials, as an engine connects, ships its ledger as
// before but may not publish a cosignature nor purge, change or delete a
// stream; the owner (the collector) may.
func TestGuard_OnlyTheOwnerPublishesCosignatures(t *testing.T) {
	const prefix = fleet.DefaultPrefix
	srv, err := natsrv.Start(natsrv.Options{Dir: t.TempDir(), Guard: &natsrv.Guard{User: "collector", Password: "s3cret", Owned: fleet.CollectorOnly(prefix)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	owner, err := nats.Connect(srv.ClientURL(), nats.UserInfo("collector", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	ojs, _ := jetstream.New(owner)
	if err := fleet.EnsureStreams(ctx, ojs, prefix, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := nats.Connect(srv.ClientURL(), nats.UserInfo("collector", "wrong")); err == nil {
		t.Fatal("the owner's user with a wrong password was let in")
	}
	if _, err := nats.Connect(srv.ClientURL(), nats.UserInfo(natsrv.NoAuthUser, "")); err == nil {
		t.Fatalf("%s logged in by name without its password", natsrv.NoAuthUser)
	}

	v := &violations{ch: make(chan struct{}, 1)}
	engine, err := nats.Connect(srv.ClientURL(), nats.ErrorHandler(v.handler))
	if err != nil {
		t.Fatalf("a client without credentials (an engine): %v", err)
	}
	defer engine.Close()
	ejs, _ := jetstream.New(engine)
	const id = "0123456789abcdef0123456789abcdef"
	// What an engine does: find the streams, ship, read its cosignature.
	if err := fleet.EnsureStreams(ctx, ejs, prefix, 1); err != nil {
		t.Fatalf("engine: streams: %v", err)
	}
	entry := nats.NewMsg(fleet.LedgerSubject(prefix, id))
	entry.Data = []byte("entry")
	if _, err := ejs.PublishMsg(ctx, entry); err != nil {
		t.Fatalf("engine: ship: %v", err)
	}
	cosig, err := ejs.Stream(ctx, fleet.CosigStream(prefix))
	if err != nil {
		t.Fatal(err)
	}

	// Refused: a cosignature, a resend request, purging, deleting or
	// reconfiguring a stream.
	if err := engine.PublishMsg(fleet.CosigMessage(prefix, id, 3, []byte("old note\n"))); err != nil {
		t.Fatal(err)
	}
	v.waitFor(t, fleet.CosigSubject(prefix, id))
	if err := engine.Publish(fleet.CtlSubject(prefix, id), []byte("{}")); err != nil {
		t.Fatal(err)
	}
	v.waitFor(t, fleet.CtlSubject(prefix, id))
	for _, api := range []struct {
		subject string
		call    func(short context.Context) error
	}{
		{"$JS.API.STREAM.PURGE." + fleet.CosigStream(prefix), func(short context.Context) error { return cosig.Purge(short) }},
		{"$JS.API.STREAM.PURGE." + fleet.LedgerStream(prefix), func(short context.Context) error {
			st, _ := ejs.Stream(ctx, fleet.LedgerStream(prefix))
			return st.Purge(short)
		}},
		{"$JS.API.STREAM.DELETE." + fleet.CosigStream(prefix), func(short context.Context) error { return ejs.DeleteStream(short, fleet.CosigStream(prefix)) }},
		{"$JS.API.STREAM.UPDATE." + fleet.CosigStream(prefix), func(short context.Context) error {
			cfg := fleet.CosigStreamConfig(prefix, 1)
			cfg.MaxMsgsPerSubject = 1
			_, err := ejs.UpdateStream(short, cfg)
			return err
		}},
		{"$JS.API.STREAM.CREATE.EVIL", func(short context.Context) error {
			_, err := ejs.CreateStream(short, jetstream.StreamConfig{Name: "EVIL", Subjects: []string{"evil.>"}})
			return err
		}},
	} {
		// The refused request has no answer: it fails when its context
		// ends; the server's report of the refusal is what is waited for.
		short, stop := context.WithTimeout(ctx, 2*time.Second)
		if err := api.call(short); err == nil {
			t.Errorf("%s: the engine's request succeeded", api.subject)
		}
		stop()
		v.waitFor(t, api.subject)
	}

	// The owner sees nothing of it, and may publish a cosignature.
	if _, err := ojs.Stream(ctx, "EVIL"); !errors.Is(err, jetstream.ErrStreamNotFound) {
		t.Errorf("stream EVIL: %v", err)
	}
	ocosig, err := ojs.Stream(ctx, fleet.CosigStream(prefix))
	if err != nil {
		t.Fatal(err)
	}
	if ocosig.CachedInfo().Config.MaxMsgsPerSubject != -1 {
		t.Errorf("the cosignature stream was reconfigured: %+v", ocosig.CachedInfo().Config)
	}
	if _, err := ocosig.GetLastMsgForSubject(ctx, fleet.CosigSubject(prefix, id)); !errors.Is(err, jetstream.ErrMsgNotFound) {
		t.Errorf("the engine's cosignature was stored: %v", err)
	}
	if st, err := ojs.Stream(ctx, fleet.LedgerStream(prefix)); err != nil || st.CachedInfo().State.Msgs != 1 {
		t.Errorf("the ledger stream after the engine's purge: %v", err)
	}
	if _, err := ojs.PublishMsg(ctx, fleet.CosigMessage(prefix, id, 3, []byte("note\n"))); err != nil {
		t.Errorf("the owner's cosignature: %v", err)
	}
	if _, err := cosig.GetLastMsgForSubject(ctx, fleet.CosigSubject(prefix, id)); err != nil {
		t.Errorf("the engine reads the owner's cosignature: %v", err)
	}
}
