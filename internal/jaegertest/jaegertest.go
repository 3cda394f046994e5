package jaegertest

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// BuildCommand builds Jaeger as .ci/run does.
const BuildCommand = "cd .ci/jaeger && CGO_ENABLED=0 go build -o ../bin/jaeger github.com/jaegertracing/jaeger/cmd/jaeger"

// Root is the module root (this file is internal/jaegertest/).
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// Binary returns the jaeger binary: $OPX_JAEGER, else .ci/bin/jaeger,
// else one on PATH. None skips the test, or fails it under CI=true.
func Binary(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("OPX_JAEGER"), filepath.Join(Root(), ".ci", "bin", "jaeger")} {
		if p == "" {
			continue
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	p, err := exec.LookPath("jaeger")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("jaeger is not built (.ci/run builds it: %s)", BuildCommand)
		}
		t.Skipf("jaeger is not built (.ci/run builds it: %s)", BuildCommand)
	}
	return p
}

// Jaeger is a running Jaeger v2.
type Jaeger struct {
	// OTLPGRPC is host:port of the OTLP/gRPC receiver, OTLPHTTP the
	// http:// URL of the OTLP/HTTP one, Query the http:// URL of the
	// query API.
	OTLPGRPC, OTLPHTTP, Query string

	cmd  *exec.Cmd
	dir  string
	out  *lockedBuf
	once sync.Once
}

const config = `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: mem
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
  jaeger_storage:
    backends:
      mem:
        memory:
          max_traces: 100000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:%d
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: mem
`

// Start runs Jaeger in dir (a directory the caller removes) and waits
// until its query API answers. Call it on the test's goroutine (it may
// skip or fail the test). Stop it with Stop.
func Start(t testing.TB, dir string) *Jaeger {
	t.Helper()
	bin := Binary(t)
	ports, err := freePorts(4)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(config, ports[0], ports[1], ports[2], ports[3])), 0o600); err != nil {
		t.Fatal(err)
	}
	j := &Jaeger{OTLPGRPC: fmt.Sprintf("127.0.0.1:%d", ports[2]), OTLPHTTP: fmt.Sprintf("http://127.0.0.1:%d", ports[3]),
		Query: fmt.Sprintf("http://127.0.0.1:%d", ports[0]), dir: dir, out: &lockedBuf{}}
	j.cmd = exec.Command(bin, "--config", "file:"+cfg)
	j.cmd.Dir = dir
	j.cmd.Stdout, j.cmd.Stderr = j.out, j.out
	j.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := j.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- j.cmd.Wait() }()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("jaeger exited: %v\n%s", err, j.out.String())
		default:
		}
		if resp, err := http.Get(j.Query + "/api/services"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				go func() { <-exited }()
				return j
			}
		}
		if time.Now().After(deadline) {
			j.Stop()
			t.Fatalf("jaeger's query API did not answer within 60s\n%s", j.out.String())
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

// Stop kills the Jaeger process Start started.
func (j *Jaeger) Stop() {
	if j == nil {
		return
	}
	j.once.Do(func() {
		if j.cmd.Process != nil {
			j.cmd.Process.Kill()
		}
	})
}

// Output is what Jaeger wrote so far.
func (j *Jaeger) Output() string { return j.out.String() }

// Trace is a trace as Jaeger's query API (/api/traces/{id}) gives it.
type Trace struct {
	TraceID   string             `json:"traceID"`
	Spans     []Span             `json:"spans"`
	Processes map[string]Process `json:"processes"`
}

// Process is the resource a span came from.
type Process struct {
	ServiceName string `json:"serviceName"`
	Tags        []KV   `json:"tags"`
}

// Span is one span of a Trace.
type Span struct {
	TraceID       string `json:"traceID"`
	SpanID        string `json:"spanID"`
	OperationName string `json:"operationName"`
	References    []Ref  `json:"references"`
	StartTime     int64  `json:"startTime"` // microseconds since the epoch
	Duration      int64  `json:"duration"`  // microseconds
	Tags          []KV   `json:"tags"`
	Logs          []Log  `json:"logs"`
	ProcessID     string `json:"processID"`
}

// Ref is a span reference (CHILD_OF: the parent).
type Ref struct {
	RefType string `json:"refType"`
	TraceID string `json:"traceID"`
	SpanID  string `json:"spanID"`
}

// KV is a tag or a log field.
type KV struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// Log is a span event.
type Log struct {
	Timestamp int64 `json:"timestamp"`
	Fields    []KV  `json:"fields"`
}

// Tag returns the value of tag k as text ("" when absent).
func Tag(kvs []KV, k string) string {
	for _, kv := range kvs {
		if kv.Key == k {
			switch v := kv.Value.(type) {
			case string:
				return v
			case float64:
				return fmt.Sprintf("%.0f", v)
			default:
				return fmt.Sprint(v)
			}
		}
	}
	return ""
}

// Parent is the span's CHILD_OF reference's span id ("" for a root).
func (s Span) Parent() string {
	for _, r := range s.References {
		if r.RefType == "CHILD_OF" {
			return r.SpanID
		}
	}
	return ""
}

// WaitTrace asks for trace id (32 hex) until it holds at least n spans or
// the deadline passes (Jaeger stores what its receiver batches).
func (j *Jaeger) WaitTrace(t testing.TB, id string, n int, within time.Duration) Trace {
	t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for {
		tr, err := j.getTrace(id)
		if err == nil && len(tr.Spans) >= n {
			return tr
		}
		if err != nil {
			last = err.Error()
		} else {
			last = fmt.Sprintf("%d spans", len(tr.Spans))
		}
		if time.Now().After(deadline) {
			t.Fatalf("trace %s: want %d spans, have %s\n%s", id, n, last, j.Output())
		}
		time.Sleep(50 * time.Millisecond) // polling a condition with a deadline
	}
}

func (j *Jaeger) getTrace(id string) (Trace, error) {
	resp, err := http.Get(j.Query + "/api/traces/" + id)
	if err != nil {
		return Trace{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return Trace{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Trace{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var out struct {
		Data []Trace `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return Trace{}, err
	}
	if len(out.Data) == 0 {
		return Trace{}, fmt.Errorf("no trace %s", id)
	}
	return out.Data[0], nil
}

func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

type lockedBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() > 1<<20 {
		return len(p), nil
	}
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
