package collector_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/collector"
)

// Issue 24 #1: a cosignature stream made by an earlier opx keeps one
// message per source, so an older cosignature published again displaced
// the witness's latest. The collector makes such a stream keep every one
// when it starts; a per-source limit an operator chose is left alone.
func TestCollector_KeepsEveryCosignature(t *testing.T) {
	for _, tt := range []struct {
		name      string
		perSource int64
		want      int64
	}{{"made by an earlier opx", 1, -1}, {"the operator's limit", 5, 5}} {
		t.Run(tt.name, func(t *testing.T) {
			srv := startServer(t)
			nc, err := nats.Connect(srv.ClientURL())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			js, _ := jetstream.New(nc)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			legacy := fleet.CosigStreamConfig(prefix, 1)
			legacy.MaxMsgsPerSubject = tt.perSource
			if _, err := js.CreateStream(ctx, legacy); err != nil {
				t.Fatal(err)
			}
			startCollector(t, srv.ClientURL(), t.TempDir())
			// The collector consumes once its streams are as it wants
			// them: wait for its consumer, then read the configuration.
			waitFor(t, "the collector's consumer", func() bool {
				_, err := js.Consumer(ctx, fleet.LedgerStream(prefix), "opx-collector")
				return err == nil
			})
			st, err := js.Stream(ctx, fleet.CosigStream(prefix))
			if err != nil {
				t.Fatal(err)
			}
			if got := st.CachedInfo().Config.MaxMsgsPerSubject; got != tt.want {
				t.Errorf("max messages per source %d, want %d", got, tt.want)
			}
		})
	}
}

// TestCollector_StopMidStartIsNotAnError: a collector stopped while it
// sets up (its streams, its consumer) returns nil, as when stopped while
// it consumes: what the stop interrupted is not a failure (CI saw
// "consumer: context canceled" from a test that stopped the collector
// just as its consumer was being created).
func TestCollector_StopMidStartIsNotAnError(t *testing.T) {
	srv := startServer(t)
	c, err := collector.New(collector.Config{URL: srv.ClientURL(), Prefix: prefix, Store: t.TempDir(), NoSync: true, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Run(ctx); err != nil {
		t.Errorf("Run stopped before it began: %v, want nil", err)
	}
}
