package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

var (
	out   = bufio.NewWriterSize(os.Stdout, 1<<16)
	outMu sync.Mutex
	gen   int // tool list generation ("change")
	// lingering keeps it running after its input ends ("closeout").
	lingering atomic.Bool
	genMu     sync.Mutex
)

type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

func main() {
	start := flag.String("start", "", "how to start: exit, silent, garbage, badtools, biglist, noisy")
	flag.Parse()
	if flag.NArg() > 0 && flag.Arg(0) == "child" {
		child()
		return
	}
	if *start == "exit" {
		fmt.Fprintln(os.Stderr, "badserver: refusing to start (-start exit)")
		os.Exit(7)
	}
	if *start == "noisy" {
		writeRaw("garbage before anything\n{\"jsonrpc\":\"2.0\",\"id\":77,\"result\":{}}\n[]\n")
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var m message
			if json.Unmarshal(line, &m) == nil {
				handle(m, *start)
			}
		}
		if err != nil {
			if lingering.Load() {
				forever()
			}
			return
		}
	}
}

func send(v any) {
	b, _ := json.Marshal(v)
	writeRaw(string(b) + "\n")
}

func writeRaw(s string) {
	outMu.Lock()
	defer outMu.Unlock()
	out.WriteString(s)
	out.Flush()
}

func result(id json.RawMessage, r any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": r})
}

func text(s string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": s}}}
}

func handle(m message, start string) {
	if m.ID == nil {
		return // notifications
	}
	switch m.Method {
	case "initialize":
		switch start {
		case "silent":
			return
		case "garbage":
			writeRaw("this is not JSON-RPC\n")
			return
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		json.Unmarshal(m.Params, &p)
		result(m.ID, map[string]any{
			"protocolVersion": p.ProtocolVersion,
			"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
			"serverInfo":      map[string]any{"name": "badserver", "version": "1.0.0"},
		})
	case "ping":
		result(m.ID, map[string]any{})
	case "tools/list":
		if start == "biglist" {
			writeRaw(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":{"tools":[{"name":"pad","description":"` +
				strings.Repeat("x", 20<<20) + `","inputSchema":{"type":"object"}}]}}` + "\n")
			return
		}
		result(m.ID, map[string]any{"tools": tools(start)})
	case "tools/call":
		var p struct {
			Name      string         `json:"name"`
			Arguments map[string]any `json:"arguments"`
			Meta      map[string]any `json:"_meta"`
		}
		json.Unmarshal(m.Params, &p)
		if p.Name == "meta" {
			// Answers the traceparent its caller sent in params._meta.
			tp, _ := p.Meta["traceparent"].(string)
			result(m.ID, text(tp))
			return
		}
		if p.Name == "freeze" {
			// Nothing is written again, and the input is no longer read:
			// this goroutine is the reader.
			outMu.Lock()
			forever()
		}
		go call(m.ID, p.Name, p.Arguments)
	default:
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found: " + m.Method}})
	}
}

var toolNames = []string{"echo", "crash", "hang", "freeze", "big", "bigfirst", "endless", "malformed", "badutf8", "garbage",
	"unexpected", "change", "flood", "spawn", "slow", "closeout", "bigrequest", "meta"}

func tool(name string) map[string]any {
	return map[string]any{"name": name, "description": "badserver's " + name,
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}
}

func tools(start string) []any {
	var out []any
	for _, n := range toolNames {
		out = append(out, tool(n))
	}
	genMu.Lock()
	for i := 1; i <= gen; i++ {
		out = append(out, tool(fmt.Sprintf("added%d", i)))
	}
	genMu.Unlock()
	if start == "badtools" {
		out = append(out,
			map[string]any{"name": "bad name", "inputSchema": map[string]any{"type": "object"}},
			map[string]any{"name": "echo", "inputSchema": map[string]any{"type": "object"}}, // twice
			map[string]any{"name": "noschema"},
			map[string]any{"name": "arrayschema", "inputSchema": map[string]any{"type": "array"}},
			map[string]any{"name": strings.Repeat("l", 70), "inputSchema": map[string]any{"type": "object"}},
			"not an object",
		)
	}
	return out
}

func num(args map[string]any, key string, def int) int {
	if v, ok := args[key].(float64); ok {
		return int(v)
	}
	return def
}

func call(id json.RawMessage, name string, args map[string]any) {
	switch name {
	case "echo":
		s, _ := args["text"].(string)
		result(id, text(s))
	case "crash":
		outMu.Lock()
		out.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"half`)
		out.Flush()
		fmt.Fprintln(os.Stderr, "badserver: crashing mid-call")
		os.Exit(3)
	case "hang":
		forever()
	case "big", "bigfirst":
		mb := num(args, "mb", 100)
		outMu.Lock()
		defer outMu.Unlock()
		if name == "bigfirst" {
			out.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"`)
		} else {
			out.WriteString(`{"result":{"content":[{"type":"text","text":"`)
		}
		chunk := strings.Repeat("0123456789abcdef", 1<<16) // 1 MB
		for range mb {
			out.WriteString(chunk)
		}
		if name == "bigfirst" {
			out.WriteString(`"}]}}` + "\n")
		} else {
			out.WriteString(`"}]},"jsonrpc":"2.0","id":` + string(id) + "}\n")
		}
		out.Flush()
	case "endless":
		outMu.Lock()
		out.WriteString(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":"`)
		chunk := strings.Repeat("z", 1<<16)
		for {
			if _, err := out.WriteString(chunk); err != nil {
				return
			}
		}
	case "malformed":
		writeRaw(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"cut` + "\n")
	case "badutf8":
		writeRaw(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"bad ` + "\xff\xfe" + ` here"}]}}` + "\n")
	case "garbage":
		n := num(args, "lines", 100)
		var b strings.Builder
		for i := range n {
			switch i % 4 {
			case 0:
				b.WriteString("not json at all\n")
			case 1:
				b.WriteString(`{"jsonrpc":"1.0","id":"x"}` + "\n")
			case 2:
				b.WriteString("[1,2,3]\n")
			default:
				b.WriteString("\x00\xff\xfe{{{\n")
			}
		}
		writeRaw(b.String())
		result(id, text("after garbage"))
	case "unexpected":
		result(id, text("first"))
		result(json.RawMessage(`987654321`), text("to nobody"))
		for i := range 20 {
			send(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("srv-%d", i), "method": "roots/list"})
		}
	case "change":
		genMu.Lock()
		gen++
		genMu.Unlock()
		// The answer and the notification in one write: a ping the
		// client sends once it has the answer is answered after both
		// (the reader answers pings while calls run in goroutines, so
		// two writes could put the ping's answer between them, and opx
		// reads a change only up to that answer: docs/mcp.md).
		r, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "result": text("changed")})
		n, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
		writeRaw(string(r) + "\n" + string(n) + "\n")
	case "flood":
		mb := num(args, "mb", 50)
		long := strings.Repeat("E", 1<<20) // a 1 MB line
		short := strings.Repeat("e", 99) + "\n"
		for i := range mb {
			if i%2 == 0 {
				io.WriteString(os.Stderr, long+"\n")
			} else {
				io.WriteString(os.Stderr, strings.Repeat(short, 1<<20/100))
			}
		}
		result(id, text("flooded"))
	case "spawn":
		exe, _ := os.Executable()
		cmd := exec.Command(exe, "child")
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			result(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": err.Error()}}, "isError": true})
			return
		}
		result(id, text(fmt.Sprintf("child %d", cmd.Process.Pid)))
	case "closeout":
		lingering.Store(true) // not even the end of its input ends it
		outMu.Lock()
		os.Stdout.Close()
		forever()
	case "bigrequest":
		send(map[string]any{"jsonrpc": "2.0", "id": "big", "method": "roots/list", "params": map[string]any{"pad": strings.Repeat("p", 1<<20)}})
		send(map[string]any{"jsonrpc": "2.0", "id": strings.Repeat("i", 1000), "method": "ping"})
		result(id, text("sent"))
	case "slow":
		time.Sleep(time.Duration(num(args, "ms", 100)) * time.Millisecond)
		result(id, text("slow"))
	default:
		send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": -32602, "message": "unknown tool " + name}})
	}
}

// forever blocks (with a timer, so the runtime sees no deadlock).
func forever() {
	for {
		time.Sleep(time.Hour)
	}
}

// child writes to stderr until killed.
func child() {
	for {
		fmt.Fprintln(os.Stderr, "badserver child: still here")
		time.Sleep(10 * time.Millisecond)
	}
}
