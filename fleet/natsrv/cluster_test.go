package natsrv_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/opx-dev/opx/fleet"
	"github.com/opx-dev/opx/fleet/natsrv"
)

// The loopback cluster is what the fleet's failure tests stand on: three
// real nats-servers, the ledger stream replicated three times. Losing one
// member loses nothing acknowledged, and a member that comes back catches
// up from its peers.

const testID = "0123456789abcdef0123456789abcdef"

// waitUntil polls cond until it holds or a generous bound passes (a busy
// 2-core CI machine must never reach it).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func entryBytes(seq uint64) []byte {
	return fmt.Appendf(nil, `{"seq":%d,"type":"test.entry","payload":"%s"}`, seq, bytes.Repeat([]byte{'x'}, int(seq%97)))
}

// publish publishes entry seq until JetStream acknowledges it: while the
// cluster elects a new leader a publish may time out, and the resend with
// the same message id is what the shipper does too.
func publish(t *testing.T, js jetstream.JetStream, seq uint64) {
	t.Helper()
	msg := fleet.EntryMessages(fleet.DefaultPrefix, testID, seq, entryBytes(seq))[0]
	waitUntil(t, fmt.Sprintf("an ack for entry %d", seq), func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := js.PublishMsg(ctx, msg)
		return err == nil
	})
}

// localState is the ledger stream's state as member s holds it in its own
// store (not what the stream leader reports).
func localState(s *natsrv.Server) (server.StreamState, bool) {
	if !s.NATS().Running() {
		return server.StreamState{}, false
	}
	info, err := s.NATS().Jsz(&server.JSzOptions{Accounts: true, Streams: true})
	if err != nil {
		return server.StreamState{}, false
	}
	for _, a := range info.AccountDetails {
		for _, st := range a.Streams {
			if st.Name == fleet.LedgerStream(fleet.DefaultPrefix) {
				return st.State, true
			}
		}
	}
	return server.StreamState{}, false
}

// readAll reads the ledger stream's messages 1..want and returns their
// bodies. A read that fails (the cluster still settling after a member's
// restart) is retried: reading changes nothing.
func readAll(t *testing.T, js jetstream.JetStream, want uint64) [][]byte {
	t.Helper()
	var out [][]byte
	for seq := uint64(1); seq <= want; seq++ {
		var data []byte
		waitUntil(t, fmt.Sprintf("stream message %d", seq), func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			st, err := js.Stream(ctx, fleet.LedgerStream(fleet.DefaultPrefix))
			if err != nil {
				return false
			}
			m, err := st.GetMsg(ctx, seq)
			if err != nil {
				return false
			}
			data = m.Data
			return true
		})
		out = append(out, data)
	}
	return out
}

func TestCluster_KillMember_NothingLost_CatchesUp(t *testing.T) {
	c, err := natsrv.StartCluster(t.TempDir(), "opxtest", 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	nc, err := nats.Connect(c.ClientURLs(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := fleet.EnsureStreams(ctx, js, fleet.DefaultPrefix, 3); err != nil {
		t.Fatal(err)
	}
	const before, during, after = 200, 200, 100
	seq := uint64(0)
	for range before {
		seq++
		publish(t, js, seq)
	}

	// Kill the stream's leader: the hardest member to lose.
	var leader string
	waitUntil(t, "a stream leader", func() bool {
		st, err := js.Stream(ctx, fleet.LedgerStream(fleet.DefaultPrefix))
		if err != nil {
			return false
		}
		info, err := st.Info(ctx)
		if err != nil || info.Cluster == nil {
			return false
		}
		leader = info.Cluster.Leader
		return leader != ""
	})
	victim := -1
	for i, s := range c.Servers {
		if s.Options().Name == leader {
			victim = i
		}
	}
	if victim < 0 {
		t.Fatalf("leader %q is none of the members", leader)
	}
	c.Servers[victim].Shutdown()
	for range during {
		seq++
		publish(t, js, seq)
	}

	s, err := c.Servers[victim].Restart()
	if err != nil {
		t.Fatal(err)
	}
	c.Servers[victim] = s
	for range after {
		seq++
		publish(t, js, seq)
	}
	// The restarted member holds every message in its own store, and so
	// does every other: an acknowledgement needs a quorum (two of three),
	// so a follower that was not in it may still be applying the last
	// messages when the restarted member has them all.
	waitUntil(t, "the restarted member to catch up", func() bool {
		st, ok := localState(s)
		return ok && st.Msgs == seq && st.LastSeq == seq
	})
	waitUntil(t, "every member to hold every message", func() bool {
		for _, m := range c.Servers {
			if st, ok := localState(m); !ok || st.Msgs != seq || st.LastSeq != seq {
				return false
			}
		}
		return true
	})
	for i, m := range c.Servers {
		if st, ok := localState(m); !ok || st.Msgs != seq {
			t.Errorf("member %d holds %d messages, want %d", i+1, st.Msgs, seq)
		}
	}
	// Nothing lost, nothing twice, in order.
	got := readAll(t, js, seq)
	for i, b := range got {
		if want := entryBytes(uint64(i + 1)); !bytes.Equal(b, want) {
			t.Fatalf("message %d is %q, want %q", i+1, b, want)
		}
	}
}

// TestCluster_ResendIsDeduplicated: a publish resent after a lost ack (the
// same Nats-Msg-Id) is stored once.
func TestCluster_ResendIsDeduplicated(t *testing.T) {
	s, err := natsrv.Start(natsrv.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if err := fleet.EnsureStreams(ctx, js, fleet.DefaultPrefix, 1); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		publish(t, js, 1)
	}
	publish(t, js, 2)
	st, _ := js.Stream(ctx, fleet.LedgerStream(fleet.DefaultPrefix))
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.State.Msgs != 2 {
		t.Errorf("%d messages stored, want 2", info.State.Msgs)
	}
}

// StartCluster returns only when the JetStream meta leader counts every
// member as a peer it can place a replica on: a 3-replica stream created
// at once must not be refused for want of peers (CI once saw "no suitable
// peers for placement" when StartCluster returned on a leader alone).
func TestStartCluster_LeaderCountsEveryMember(t *testing.T) {
	c, err := natsrv.StartCluster(t.TempDir(), "opxready", 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Shutdown)
	leaders := 0
	for _, s := range c.Servers {
		if !s.NATS().JetStreamIsLeader() {
			continue
		}
		leaders++
		if peers := s.NATS().JetStreamClusterPeers(); len(peers) != 3 {
			t.Fatalf("the meta leader places on %d peers (%v) when StartCluster returns, want 3", len(peers), peers)
		}
	}
	if leaders != 1 {
		t.Fatalf("%d meta leaders when StartCluster returns, want 1", leaders)
	}
}
