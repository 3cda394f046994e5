package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
)

// The client's requests still owed an answer, by id (session 19; session
// 18 counted them). The proxy reads each request's id from the client's
// input as the SDK reads it (requestReader), and drops it when the SDK
// writes its answer (answerWriter): an answer pays only for its own
// request — an answer with an id nobody asked, or the null id of a parse
// error, pays for nothing — so the end of a session waits for exactly the
// answers still to come.

// maxOwed bounds the ids kept: a client that sends more requests than this
// without reading its answers is not waited for beyond them.
const maxOwed = 4096

// idKey is a JSON-RPC id as a map key, or "" for no id (a notification,
// a null id, anything but a number or a string): 7 and 7.0 are one id.
func idKey(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch x := v.(type) {
	case string:
		return "s" + x
	case float64:
		return "n" + strconv.FormatFloat(x, 'g', -1, 64)
	}
	return ""
}

// owe records the requests of one line of the client's input (a message,
// or a batch of them).
func (p *mcpProxy) owe(line []byte) {
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	var ms []msg
	if t := bytes.TrimSpace(line); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &ms) != nil {
			return
		}
	} else {
		var m msg
		if json.Unmarshal(t, &m) != nil {
			return
		}
		ms = append(ms, m)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range ms {
		if k := idKey(m.ID); k != "" && m.Method != "" && len(p.owed) < maxOwed {
			if p.owed == nil {
				p.owed = map[string]bool{}
			}
			p.owed[k] = true
		}
	}
}

// pay drops the request an answer on the client's output answers.
func (p *mcpProxy) pay(b []byte) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Result json.RawMessage `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil || m.Method != "" || m.Result == nil && m.Error == nil {
		return // not an answer: a notification, or a request of the server's
	}
	k := idKey(m.ID)
	if k == "" {
		return // a parse error's answer (id null) answers nothing owed
	}
	p.mu.Lock()
	if p.owed[k] {
		delete(p.owed, k)
		p.answered.Broadcast()
	}
	p.mu.Unlock()
}

// requestReader passes the client's input to the SDK and records the ids
// of the requests in it, line by line (bounded: a line over max is not
// read for its id).
type requestReader struct {
	r    io.Reader
	p    *mcpProxy
	max  int
	line []byte
	over bool // the current line went over max
}

func (q *requestReader) Read(b []byte) (int, error) {
	n, err := q.r.Read(b)
	rest := b[:n]
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		part := rest
		if i >= 0 {
			part = rest[:i]
		}
		if !q.over {
			if len(q.line)+len(part) > q.max {
				q.over, q.line = true, nil
			} else {
				q.line = append(q.line, part...)
			}
		}
		if i < 0 {
			break
		}
		if !q.over {
			q.p.owe(q.line)
		}
		q.line, q.over = q.line[:0], false
		if cap(q.line) > 64<<10 {
			q.line = nil // one big line does not hold its buffer for the session
		}
		rest = rest[i+1:]
	}
	return n, err
}
