package main_test

// The time a user waits at `opx start`: from exec of the manager until
// the agent is connected (sandbox status known), beside the floor of
// starting the binary at all.
//
//	go test -run '^$' -bench StartToAgentReady -benchtime 20x ./cli/opx/

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/opx-dev/opx/engine/registry"
)

func BenchmarkStartToAgentReady(b *testing.B) {
	bin := buildOpx(b)
	ws, state := b.TempDir(), b.TempDir()
	env := append(os.Environ(), "XDG_STATE_HOME="+state, "NO_COLOR=1")
	median := func(d []time.Duration) time.Duration {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2]
	}
	var floor, ours []time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		cmd := exec.Command(bin, "--help")
		cmd.Env = env
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		floor = append(floor, time.Since(t0))

		t0 = time.Now()
		m := exec.Command(bin, "start", "--workspace", ws)
		m.Env = env
		if err := m.Start(); err != nil {
			b.Fatal(err)
		}
		ready := false
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline) && !ready; {
			matches, _ := filepath.Glob(filepath.Join(state, "opx", "*"))
			for _, dir := range matches {
				if _, _, err := registry.Lookup(registry.Dir(dir)); err == nil {
					out, _ := statusJSON(bin, env, ws)
					ready = out
				}
			}
			if !ready {
				time.Sleep(2 * time.Millisecond)
			}
		}
		if !ready {
			b.Fatal("the agent never came up")
		}
		ours = append(ours, time.Since(t0))
		st := exec.Command(bin, "stop", "--workspace", ws)
		st.Env = env
		if out, err := st.CombinedOutput(); err != nil {
			b.Fatalf("stop: %v %s", err, out)
		}
		m.Wait()
	}
	b.ReportMetric(float64(median(ours).Microseconds())/1000, "start-to-ready-ms")
	b.ReportMetric(float64(median(floor).Microseconds())/1000, "exec-floor-ms")
}

// statusJSON reports whether the agent is connected, asking the engine
// the way a user would.
func statusJSON(bin string, env []string, ws string) (bool, error) {
	cmd := exec.Command(bin, "status", "--json", "--workspace", ws)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		return false, err
	}
	var st status
	if err := json.Unmarshal(out, &st); err != nil {
		return false, err
	}
	return st.AgentPID != 0 && st.SandboxStatus != "no agent", nil
}
