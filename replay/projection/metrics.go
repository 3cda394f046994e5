package projection

import (
	"bytes"
	"encoding/binary"
	"strconv"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
)

// Metrics counts, each under a key of NUL-separated parts and as an
// 8-byte big-endian number:
//
//	verdict tier rule decision         shield verdicts
//	llm model calls|errors|latency_ms|max_latency_ms|input_tokens|output_tokens
//	tool name calls|failed|exited|duration_ms (failed calls included)
//
// A call counts as failed or exited as event.ExecOutcome says: the one
// definition every view of the ledger uses.
type Metrics struct{}

func (Metrics) Name() string    { return "metrics" }
func (Metrics) Version() string { return "3" }

func (Metrics) Apply(b ledger.Bucket, e *ledger.Entry) error {
	switch e.Type {
	case event.TypeShieldVerdict:
		f := ledger.Fields(e.Data, "decision", "rule", "tier")
		return add(b, 1, "verdict", strconv.FormatInt(ledger.RawInt(f[2]), 10), ledger.RawString(f[1]), ledger.RawString(f[0]))
	case event.TypeLLMResponse:
		f := ledger.Fields(e.Data, "error", "latency_ms", "model", "usage")
		m := ledger.RawString(f[2])
		if err := add(b, 1, "llm", m, "calls"); err != nil {
			return err
		}
		if f[0] != nil && ledger.RawString(f[0]) != "" {
			if err := add(b, 1, "llm", m, "errors"); err != nil {
				return err
			}
		}
		latency := ledger.RawInt(f[1])
		if err := maxOf(b, uint64(max(latency, 0)), "llm", m, "max_latency_ms"); err != nil {
			return err
		}
		u := ledger.Fields(f[3], "input_tokens", "output_tokens")
		for _, kv := range []struct {
			n    int64
			name string
		}{{latency, "latency_ms"}, {ledger.RawInt(u[0]), "input_tokens"}, {ledger.RawInt(u[1]), "output_tokens"}} {
			if err := add(b, uint64(max(kv.n, 0)), "llm", m, kv.name); err != nil {
				return err
			}
		}
	case event.TypeExecCompleted, event.TypeExecFailed:
		f := ledger.Fields(e.Data, "duration_ms", "exit_code", "failed", "tool")
		tool := ledger.RawString(f[3])
		outcome := event.ExecError
		if e.Type == event.TypeExecCompleted {
			outcome = event.ExecOutcome(tool, ledger.RawInt(f[1]), string(f[2]) == "true")
		}
		if err := add(b, 1, "tool", tool, "calls"); err != nil {
			return err
		}
		switch outcome {
		case event.ExecError:
			if err := add(b, 1, "tool", tool, "failed"); err != nil {
				return err
			}
		case event.ExecExited:
			if err := add(b, 1, "tool", tool, "exited"); err != nil {
				return err
			}
		}
		return add(b, uint64(max(ledger.RawInt(f[0]), 0)), "tool", tool, "duration_ms")
	}
	return nil
}

func add(b ledger.Bucket, n uint64, parts ...string) error {
	k := key(parts...)
	var cur uint64
	if v := b.Get(k); len(v) == 8 {
		cur = binary.BigEndian.Uint64(v)
	}
	return b.Put(k, binary.BigEndian.AppendUint64(nil, cur+n))
}

func maxOf(b ledger.Bucket, n uint64, parts ...string) error {
	k := key(parts...)
	if v := b.Get(k); len(v) == 8 && binary.BigEndian.Uint64(v) >= n {
		return nil
	}
	return b.Put(k, binary.BigEndian.AppendUint64(nil, n))
}

// Counter is one metric.
type Counter struct {
	Key   []string `json:"key"`
	Value uint64   `json:"value"`
}

// ReadMetrics returns every counter, in key order.
func ReadMetrics(b ledger.Bucket) []Counter {
	var out []Counter
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if len(v) != 8 {
			continue
		}
		var parts []string
		for _, p := range bytes.Split(k, []byte{0}) {
			parts = append(parts, string(p))
		}
		out = append(out, Counter{Key: parts, Value: binary.BigEndian.Uint64(v)})
	}
	return out
}
