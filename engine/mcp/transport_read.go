package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The reading side of lineConn: every line the server writes is taken
// here, bounded, and either handed to the SDK, handed to a call of opx's
// own, or reported and dropped.

// readLoop reads the server's output line by line until it ends.
func (c *lineConn) readLoop(r io.Reader) {
	defer close(c.readDone)
	br := bufio.NewReaderSize(r, readBufferSize)
	var line []byte
	for {
		var (
			size int64
			over bool
			scan idScanner
			err  error
		)
		line = line[:0]
		for {
			var chunk []byte
			chunk, err = br.ReadSlice('\n')
			size += int64(len(chunk))
			switch {
			case over:
				scan.Write(chunk)
			case len(line)+len(chunk) > c.maxLine:
				over = true
				scan.Write(line)
				scan.Write(chunk)
				line = line[:0]
			default:
				line = appendGrowing(line, chunk, c.maxLine)
			}
			if err != bufio.ErrBufferFull {
				break
			}
		}
		if size > 0 {
			if over {
				scan.finish()
				c.oversize(size, &scan)
			} else {
				c.handle(line, size)
			}
		}
		if cap(line) > readBufferSize {
			line = nil // do not keep a large buffer between messages
		}
		if err != nil {
			c.readErr = err
			return
		}
	}
}

// appendGrowing appends chunk to line, growing it fourfold (append grows
// large slices by a quarter, which would allocate five times the cap on
// the way to it; fourfold allocates a third more than the final size)
// but never past max.
func appendGrowing(line, chunk []byte, max int) []byte {
	if need := len(line) + len(chunk); need > cap(line) {
		grown := make([]byte, len(line), min(max, 4*need))
		copy(grown, line)
		line = grown
	}
	return append(line, chunk...)
}

// oversize reports a line over the cap, then answers the request it
// answered with an error, if its id was found.
func (c *lineConn) oversize(size int64, scan *idScanner) {
	p := problem{kind: "oversize", size: size,
		detail: fmt.Sprintf("a message of %d bytes is over the cap of %d bytes; discarded past the cap, unread", size, c.maxLine)}
	answer := func() {}
	if id, ok := scan.ID(); ok {
		p.callID, answer = c.fail(id, fmt.Errorf("%w: %d bytes, the cap is %d", ErrOversize, size, c.maxLine))
	} else {
		p.detail += "; no id found"
	}
	// Recorded before the answer, so that the entry precedes whatever
	// the caller records of the call.
	c.report(p)
	answer()
}

// fail takes the pending request id (opx's own or the SDK's) off the
// books and returns the pipeline call it belonged to, if any, and the
// function that answers it with err.
func (c *lineConn) fail(id jsonrpc.ID, err error) (string, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s, ok := id.Raw().(string); ok {
		if w, ok := c.own[s]; ok {
			delete(c.own, s)
			return w.callID, func() { w.answer <- ownAnswer{err: err} }
		}
	}
	if _, ok := c.sdkCalls[id]; ok {
		delete(c.sdkCalls, id)
		return "", func() {
			c.deliver(&jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}})
		}
	}
	return "", func() {}
}

// handle takes one line of at most maxLine bytes.
func (c *lineConn) handle(line []byte, size int64) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err == nil && !utf8.Valid(line) {
		// JSON is UTF-8 (RFC 8259); what is passed on must be, so that
		// it can be recorded and handed on as it came.
		err = errors.New("not valid UTF-8")
	}
	if err != nil {
		p := problem{kind: "malformed", size: size, detail: "not a JSON-RPC message: " + clip(err.Error(), 200)}
		answer := func() {}
		if id, ok := scanID(line); ok {
			p.callID, answer = c.fail(id, fmt.Errorf("%w: %v", ErrMalformed, clip(err.Error(), 200)))
		}
		c.report(p)
		answer()
		return
	}
	switch m := msg.(type) {
	case *jsonrpc.Response:
		c.response(m, size)
	case *jsonrpc.Request:
		c.request(m, size)
	}
}

func (c *lineConn) response(m *jsonrpc.Response, size int64) {
	c.mu.Lock()
	if s, ok := m.ID.Raw().(string); ok {
		if w, ok := c.own[s]; ok {
			delete(c.own, s)
			c.mu.Unlock()
			a := ownAnswer{result: m.Result, err: m.Error}
			if m.Error == nil && m.Result == nil {
				a.err = fmt.Errorf("%w: an answer with neither result nor error", ErrMalformed)
			}
			w.answer <- a
			return
		}
	}
	if method, ok := c.sdkCalls[m.ID]; ok {
		delete(c.sdkCalls, m.ID)
		if method == "initialize" && m.Error == nil && len(m.Result) <= maxInitializeBytes {
			c.initResult = slices.Clone(m.Result)
		}
		c.mu.Unlock()
		c.deliver(m)
		return
	}
	late := false
	for _, id := range c.cancelled {
		late = late || id == m.ID
	}
	c.mu.Unlock()
	if !late {
		c.report(problem{kind: "unexpected", size: size, detail: fmt.Sprintf("an answer to no pending request (id %v)", clipAny(m.ID.Raw()))})
	}
}

// request takes a request or notification from the server.
func (c *lineConn) request(m *jsonrpc.Request, size int64) {
	if !m.IsCall() {
		// None reaches the SDK's handler queue, which is unbounded, but
		// the cancellation of a request of the server's in flight.
		switch m.Method {
		case "notifications/tools/list_changed":
			if c.toolsChanged != nil {
				c.toolsChanged() // coalesces
			}
		case "notifications/cancelled":
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					c.mu.Lock()
					inFlight := c.serverCalls[id]
					c.mu.Unlock()
					if inFlight {
						c.deliver(m)
					}
				}
			}
		case "notifications/message":
			if c.logf != nil {
				c.logf("log: %s", clip(string(m.Params[:min(len(m.Params), 600)]), 512))
			}
		}
		return // others (progress, resources/updated, ...) opx does not use
	}
	if size > maxServerRequestBytes {
		c.report(problem{kind: "oversize", size: size, detail: fmt.Sprintf("request %s dropped: over %d bytes", clip(m.Method, 64), maxServerRequestBytes)})
		return
	}
	if id, ok := m.ID.Raw().(string); ok && len(id) > maxIDBytes {
		c.report(problem{kind: "malformed", size: size, detail: fmt.Sprintf("request %s dropped: an id of %d bytes", clip(m.Method, 64), len(id))})
		return
	}
	c.mu.Lock()
	full := len(c.serverCalls) >= maxServerRequests
	if !full {
		c.serverCalls[m.ID] = true
	}
	c.mu.Unlock()
	if full {
		c.report(problem{kind: "unexpected", size: size, detail: fmt.Sprintf("request %s dropped: %d of the server's requests are unanswered", clip(m.Method, 64), maxServerRequests)})
		return
	}
	c.deliver(m)
}

// deliver hands msg to Read, or drops it once the connection is closed.
func (c *lineConn) deliver(msg jsonrpc.Message) {
	select {
	case c.msgs <- msg:
	case <-c.closed:
	}
}
