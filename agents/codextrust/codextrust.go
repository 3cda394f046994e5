package codextrust

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// MaxLine bounds one JSON-RPC message read from the app-server.
const MaxLine = 4 << 20

// A Hook is one hook as `codex app-server` lists it (hooks/list).
type Hook struct {
	// Key names the hook in config.toml's [hooks.state]:
	// "<path of hooks.json>:<event>:<group>:<handler>".
	Key         string `json:"key"`
	EventName   string `json:"eventName"` // preToolUse, postToolUse, sessionStart, ...
	HandlerType string `json:"handlerType"`
	Command     string `json:"command"`
	Matcher     string `json:"matcher"`
	SourcePath  string `json:"sourcePath"`
	Source      string `json:"source"` // user, project, ...
	Enabled     bool   `json:"enabled"`
	IsManaged   bool   `json:"isManaged"`
	CurrentHash string `json:"currentHash"` // "sha256:..."
	TrustStatus string `json:"trustStatus"` // managed, untrusted, trusted, modified
}

// Server is the command line and environment of a `codex app-server`
// child: Argv starts codex (the app-server argument is added), Env is its
// environment (HOME or CODEX_HOME choose the configuration it reads and
// writes), Dir its working directory.
type Server struct {
	Argv []string
	Env  []string
	Dir  string
}

// List returns the hooks Codex would run in the working directories cwds
// (none: the server's own), with their hashes and trust.
func (s Server) List(ctx context.Context, cwds ...string) ([]Hook, error) {
	var hooks []Hook
	err := s.session(ctx, func(c *client) error {
		var err error
		hooks, err = c.list(cwds)
		return err
	})
	return hooks, err
}

// Trust marks as trusted, in the user's config.toml, every hook in cwds
// that sel selects and that is not trusted yet, and returns the selected
// hooks as listed afterwards (all trusted). A selection that matches no
// hook is ErrNoHooks.
func (s Server) Trust(ctx context.Context, sel func(Hook) bool, cwds ...string) ([]Hook, error) {
	var out []Hook
	err := s.session(ctx, func(c *client) error {
		hooks, err := c.list(cwds)
		if err != nil {
			return err
		}
		state := map[string]any{}
		for _, h := range hooks {
			if sel(h) && h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
				state[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
			}
		}
		if len(state) > 0 {
			edit := map[string]any{"edits": []any{map[string]any{"keyPath": "hooks.state", "mergeStrategy": "upsert", "value": state}}}
			if err := c.call("config/batchWrite", edit, nil); err != nil {
				return err
			}
		}
		if hooks, err = c.list(cwds); err != nil {
			return err
		}
		if !slices.ContainsFunc(hooks, sel) {
			return ErrNoHooks
		}
		for _, h := range hooks {
			if !sel(h) {
				continue
			}
			if h.TrustStatus != "trusted" && h.TrustStatus != "managed" {
				return fmt.Errorf("%w: %s is %s", ErrNotTrusted, h.Key, h.TrustStatus)
			}
			out = append(out, h)
		}
		return nil
	})
	return out, err
}

// session starts the app-server, initializes it, runs f and stops it.
func (s Server) session(ctx context.Context, f func(*client) error) error {
	if len(s.Argv) == 0 {
		return fmt.Errorf("%w: no codex command", ErrAppServer)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Argv[0], append(s.Argv[1:], "app-server")...)
	cmd.Env, cmd.Dir = s.Env, s.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrAppServer, err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrAppServer, err)
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("%w: start: %v", ErrAppServer, err)
	}
	defer func() {
		in.Close()
		cancel()
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		for sc.Scan() {
			select {
			case lines <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
	}()
	c := &client{ctx: ctx, in: in, lines: lines, scan: sc}
	init := map[string]any{"clientInfo": map[string]any{"name": "opx", "version": "1"}}
	if err := c.call("initialize", init, nil); err != nil {
		return err
	}
	if err := c.send(map[string]any{"method": "initialized"}); err != nil {
		return err
	}
	return f(c)
}

// client is one JSON-RPC conversation with the app-server.
type client struct {
	ctx   context.Context
	in    io.Writer
	lines <-chan []byte
	scan  *bufio.Scanner
	id    int
}

func (c *client) send(msg map[string]any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%w: write: %v", ErrAppServer, err)
	}
	return nil
}

// call sends a request and waits for its answer, skipping notifications.
func (c *client) call(method string, params any, result any) error {
	c.id++
	if err := c.send(map[string]any{"id": c.id, "method": method, "params": params}); err != nil {
		return err
	}
	for {
		select {
		case <-c.ctx.Done():
			return fmt.Errorf("%w: %s: %v", ErrAppServer, method, c.ctx.Err())
		case line, ok := <-c.lines:
			if !ok {
				if err := c.scan.Err(); err != nil {
					return fmt.Errorf("%w: %s: read: %v", ErrAppServer, method, err)
				}
				return fmt.Errorf("%w: %s: exited before answering", ErrAppServer, method)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				return fmt.Errorf("%w: %s: malformed message: %v", ErrAppServer, method, err)
			}
			if msg.ID == nil || *msg.ID != c.id || msg.Method != "" {
				continue // a notification, or a request of the server's
			}
			if msg.Error != nil {
				return fmt.Errorf("%w: %s: %s (%d)", ErrAppServer, method, msg.Error.Message, msg.Error.Code)
			}
			if result == nil {
				return nil
			}
			if err := json.Unmarshal(msg.Result, result); err != nil {
				return fmt.Errorf("%w: %s: malformed result: %v", ErrAppServer, method, err)
			}
			return nil
		}
	}
}

func (c *client) list(cwds []string) ([]Hook, error) {
	params := map[string]any{}
	if len(cwds) > 0 {
		params["cwds"] = cwds
	}
	var res struct {
		Data []struct {
			Cwd    string `json:"cwd"`
			Hooks  []Hook `json:"hooks"`
			Errors []struct {
				Message string `json:"message"`
				Path    string `json:"path"`
			} `json:"errors"`
		} `json:"data"`
	}
	if err := c.call("hooks/list", params, &res); err != nil {
		return nil, err
	}
	var hooks []Hook
	seen := map[string]bool{}
	for _, d := range res.Data {
		for _, e := range d.Errors {
			return nil, fmt.Errorf("%w: hooks/list: %s: %s", ErrAppServer, e.Path, e.Message)
		}
		for _, h := range d.Hooks {
			if !seen[h.Key] {
				seen[h.Key] = true
				hooks = append(hooks, h)
			}
		}
	}
	return hooks, nil
}
