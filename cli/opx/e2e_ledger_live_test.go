package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/opx-dev/opx/ledger"
)

// liveCall is one ledger command run while the engine was being killed
// and respawned, and what it said.
type liveCall struct {
	args         []string
	out, errOut  string
	code         int
	exportedFile string
}

// TestProcess_LedgerCommandsWhileEngineRespawns runs every ledger command
// over and over, from several clients at once, while the engine is killed
// (SIGKILL) and respawned by its manager three times, and a follow runs
// throughout. Each command either succeeds with what the ledger holds
// (checked afterwards against the final ledger: a head, an entry or an
// export that was reported must be in it, since the ledger only grows) or
// fails with one clear line and exit 1; never an integrity failure, never
// a wrong answer. Follow prints every entry once, in order, across the
// restarts.
func TestProcess_LedgerCommandsWhileEngineRespawns(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	m := w.start()
	if _, errOut, code := w.run("send", "read README.md"); code != 0 {
		t.Fatalf("opx send: %d %s", code, errOut)
	}
	follow := exec.Command(w.bin, "ledger", "follow", "--from", "0", "--json", "--workspace", w.ws)
	follow.Env = w.env()
	followOut, followErr := &syncBuffer{}, &syncBuffer{}
	follow.Stdout, follow.Stderr = followOut, followErr
	if err := follow.Start(); err != nil {
		t.Fatal(err)
	}
	followDone := make(chan error, 1)
	go func() { followDone <- follow.Wait() }()
	t.Cleanup(func() { follow.Process.Kill() })

	exports := t.TempDir()
	var mu sync.Mutex
	var calls []liveCall
	stop := make(chan struct{})
	var wg sync.WaitGroup
	commands := [][]string{
		{"ledger", "verify"}, {"ledger", "verify", "--strict", "--json"}, {"ledger", "head", "--json"},
		{"ledger", "tail", "-n", "5", "--json"}, {"ledger", "show", "3", "--json"}, {"ledger", "export"}, {"ledger", "note", "still here"},
	}
	for client := 0; client < 3; client++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := client; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				args := append([]string(nil), commands[i%len(commands)]...)
				c := liveCall{}
				if args[1] == "export" {
					c.exportedFile = filepath.Join(exports, fmt.Sprintf("e%d-%d.jsonl", client, i))
					args = append(args, "-o", c.exportedFile)
				}
				c.args = args
				c.out, c.errOut, c.code = w.run(args...)
				mu.Lock()
				calls = append(calls, c)
				mu.Unlock()
			}
		}()
	}
	st, _ := w.status()
	for kill := 0; kill < 3; kill++ {
		w.kill(st.EnginePID)
		st = w.waitAgent(m, st.AgentPID)
	}
	close(stop)
	wg.Wait()
	w.stop(m)

	l, err := ledger.OpenReadOnly(st.LedgerPath)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	final, err := l.Head()
	if err != nil {
		t.Fatal(err)
	}
	holds := func(seq uint64, hash string) bool {
		e, err := l.Get(seq)
		return err == nil && e.Hash().String() == hash
	}
	ok, failed := 0, 0
	for _, c := range calls {
		if c.code != 0 {
			failed++
			if c.code != 1 || strings.Count(strings.TrimSpace(c.errOut), "\n") != 0 || c.errOut == "" || strings.Contains(c.errOut, "goroutine") {
				t.Errorf("%v while the engine respawned: exit %d\n%s%s", c.args, c.code, c.out, c.errOut)
			}
			continue
		}
		ok++
		if err := checkLiveCall(c, holds); err != nil {
			t.Errorf("%v while the engine respawned: %v\n%s%s", c.args, err, c.out, c.errOut)
		}
		if c.exportedFile != "" {
			if out, errOut, code := w.run("ledger", "verify", c.exportedFile); code != 0 {
				t.Errorf("the export %s does not verify: %s%s", c.exportedFile, out, errOut)
			}
		}
	}
	t.Logf("%d calls: %d answered, %d clear errors", len(calls), ok, failed)
	if ok == 0 {
		t.Error("no command succeeded while the engine respawned")
	}

	// Follow printed every entry once, in order, through the restarts.
	waitFor(t, "follow to reach the final head", func() bool { return strings.Contains(followOut.String(), fmt.Sprintf(`{"seq":%d,`, final.Seq)) })
	follow.Process.Signal(syscall.SIGINT)
	if err := <-followDone; err != nil {
		t.Errorf("follow after SIGINT: %v\n%s", err, followErr.String())
	}
	lines := strings.Split(strings.TrimSpace(followOut.String()), "\n")
	if uint64(len(lines)) != final.Seq+1 {
		t.Errorf("follow printed %d lines for %d entries", len(lines), final.Seq+1)
	}
	for i, s := range lines {
		var ln struct {
			Seq  uint64 `json:"seq"`
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(s), &ln); err != nil || ln.Seq != uint64(i) || !holds(ln.Seq, ln.Hash) {
			t.Fatalf("follow line %d: %q (%v)", i, s, err)
		}
	}
	// Follow says on stderr which signed checkpoints confirmed what it
	// printed; anything else there is a complaint.
	for _, l := range strings.Split(strings.TrimSpace(followErr.String()), "\n") {
		if l != "" && !strings.HasPrefix(l, "confirmed through ") {
			t.Errorf("follow stderr: %s", followErr.String())
			break
		}
	}
}

var notedRE = regexp.MustCompile(`^noted: seq (\d+) ([0-9a-f]{64})\n$`)

// checkLiveCall checks a successful call's answer against the final
// ledger (holds reports whether it holds entry seq with that hash).
func checkLiveCall(c liveCall, holds func(uint64, string) bool) error {
	switch c.args[1] {
	case "verify":
		var rep struct {
			OK      bool   `json:"ok"`
			HeadSeq uint64 `json:"head_seq"`
			Head    string `json:"head_hash"`
		}
		if strings.HasPrefix(c.out, "{") {
			if err := json.Unmarshal([]byte(c.out), &rep); err != nil || !rep.OK {
				return fmt.Errorf("report %v", err)
			}
		} else if _, err := fmt.Sscanf(c.out, "ok: %d entries, head %d %s", new(int), &rep.HeadSeq, &rep.Head); err != nil {
			return fmt.Errorf("output: %v", err)
		}
		if !holds(rep.HeadSeq, rep.Head) {
			return fmt.Errorf("verified head %d %s is not in the ledger", rep.HeadSeq, rep.Head)
		}
	case "head":
		var h ledger.Head
		if err := json.Unmarshal([]byte(c.out), &h); err != nil || !holds(h.Seq, h.Hash.String()) {
			return fmt.Errorf("head %+v is not in the ledger (%v)", h, err)
		}
	case "tail":
		var out struct {
			Entries []struct {
				Seq  uint64 `json:"seq"`
				Hash string `json:"hash"`
			} `json:"entries"`
		}
		if err := json.Unmarshal([]byte(c.out), &out); err != nil || len(out.Entries) != 5 {
			return fmt.Errorf("tail: %v", err)
		}
		for i, e := range out.Entries {
			if !holds(e.Seq, e.Hash) || (i > 0 && e.Seq != out.Entries[i-1].Seq+1) {
				return fmt.Errorf("tail entry %d %s is not in the ledger", e.Seq, e.Hash)
			}
		}
	case "show":
		var out struct {
			Seq  uint64 `json:"seq"`
			Hash string `json:"hash"`
		}
		if err := json.Unmarshal([]byte(c.out), &out); err != nil || !holds(out.Seq, out.Hash) {
			return fmt.Errorf("show: %+v %v", out, err)
		}
	case "note":
		m := notedRE.FindStringSubmatch(c.out)
		if m == nil {
			return fmt.Errorf("note printed %q", c.out)
		}
		seq, _ := strconv.ParseUint(m[1], 10, 64)
		if !holds(seq, m[2]) {
			return fmt.Errorf("note %d %s is not in the ledger", seq, m[2])
		}
	case "export":
		if _, err := os.Stat(c.exportedFile); err != nil {
			return err
		}
	}
	return nil
}
