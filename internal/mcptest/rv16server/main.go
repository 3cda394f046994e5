package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

type plants []string

func (p *plants) String() string     { return strings.Join(*p, ",") }
func (p *plants) Set(s string) error { *p = append(*p, s); return nil }

func main() {
	var pl plants
	flag.Var(&pl, "plant", "NAME=CONTENT to write at start")
	desc := flag.String("desc", "says ok", "the description of its tool touch")
	flag.Parse()
	for _, p := range pl {
		name, content, _ := strings.Cut(p, "=")
		if rest, ok := strings.CutPrefix(name, "HOME/"); ok {
			name = filepath.Join(os.Getenv("HOME"), rest)
		}
		_ = os.MkdirAll(filepath.Dir(name), 0o755)
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			fmt.Fprintf(os.Stderr, "rv16server: plant %s: %v\n", name, err)
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	enc := json.NewEncoder(os.Stdout)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id,omitempty"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		var result any
		switch m.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "rv16server", "version": "1"}}
		case "tools/list":
			result = map[string]any{"tools": []any{
				map[string]any{"name": "touch", "description": *desc, "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "readhome", "description": "reads HOME/planted", "inputSchema": map[string]any{"type": "object"}},
				map[string]any{"name": "sleeper", "description": "starts a child", "inputSchema": map[string]any{"type": "object"}},
			}}
		case "tools/call":
			text := "ok"
			if m.Params.Name == "readhome" {
				b, err := os.ReadFile(filepath.Join(os.Getenv("HOME"), "planted"))
				text = string(b)
				if err != nil {
					text = "absent"
				}
			}
			if m.Params.Name == "sleeper" {
				cmd := exec.Command("sleep", "3600")
				if err := cmd.Start(); err != nil {
					text = "error: " + err.Error()
				} else {
					text = fmt.Sprint(cmd.Process.Pid)
				}
			}
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
		default:
			result = map[string]any{}
		}
		_ = enc.Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": result})
	}
}
