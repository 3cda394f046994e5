package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bounds of the transport, besides MaxFrameBytes.
const (
	// maxServerRequests bounds the server's requests (ping, roots/list,
	// sampling, ...) handed to the SDK and not answered yet; more are
	// dropped (recorded as "unexpected"), so a server cannot make opx
	// queue work without end.
	maxServerRequests = 8
	// maxCancelled bounds the ids of requests given up on that are
	// remembered, so a late answer to one is dropped quietly.
	maxCancelled = 64
	// writeTimeout bounds one write to the server's input when the
	// caller's context has no earlier deadline: a server that stops
	// reading cannot block opx.
	writeTimeout = 10 * time.Second
	// maxInitializeBytes bounds the initialize result kept as received
	// (a larger one is kept as the SDK read it).
	maxInitializeBytes = 1 << 20
	// readBufferSize is the read buffer; a line up to the cap is
	// gathered from it.
	readBufferSize = 64 << 10
)

// ownIDPrefix starts the ids of the requests opx sends itself (tools/call,
// tools/list, forwarded ones), told apart from the SDK's integer ids.
const ownIDPrefix = "opx-"

// problem is something the server sent that the transport could not take.
type problem struct {
	kind   string // malformed, oversize, unexpected
	size   int64
	detail string
	callID string
}

// ownCall is a request of opx's own, waiting for its answer.
type ownCall struct {
	callID string
	answer chan ownAnswer // buffered 1
}

type ownAnswer struct {
	result json.RawMessage
	err    error
}

// lineConn is the sdk.Connection opx speaks to a server over: newline-
// delimited JSON-RPC on the server's stdin and stdout, bounded whatever
// the server sends.
//
//   - A line over maxLine is not kept: the rest of it is read and thrown
//     away as it comes, an idScanner looking for its id on the way. The
//     request it answers, if its id is found, gets an error answer at
//     once; the connection goes on.
//   - A line that is not a JSON-RPC message is skipped (its request, if
//     its id can be found, answered with an error), an answer to nothing
//     pending is dropped; each is reported (the reporter bounds the rate).
//   - Of the server's notifications only those opx acts on reach the SDK
//     (tools/list_changed, cancelled); logging goes to the log. At most
//     maxServerRequests of its requests wait for an answer at a time.
//   - Every write has a deadline.
//
// Requests opx sends itself (call) bypass the SDK so that their results
// are kept as received; the SDK does initialize, pings and the server's
// requests and notifications.
type lineConn struct {
	in      *os.File // the server's stdin
	out     *os.File // the server's stdout
	maxLine int
	report  func(problem)        // from the reader goroutine only
	logf    func(string, ...any) // the server's log notifications

	writeMu sync.Mutex
	msgs    chan jsonrpc.Message // reader -> Read
	// readDone is closed when the reader has stopped (readErr says why).
	readDone chan struct{}
	readErr  error
	closed   chan struct{}
	closeMu  sync.Once
	seq      atomic.Int64

	mu          sync.Mutex
	sdkCalls    map[jsonrpc.ID]string // the SDK's requests awaiting their answer: method
	own         map[string]ownCall
	cancelled   []jsonrpc.ID // requests given up on, newest last
	serverCalls map[jsonrpc.ID]bool
	initResult  json.RawMessage // the answer to initialize, as received
}

func newLineConn(in, out *os.File, maxLine int, report func(problem), logf func(string, ...any)) *lineConn {
	c := &lineConn{
		in: in, out: out, maxLine: maxLine, report: report, logf: logf,
		msgs:        make(chan jsonrpc.Message),
		readDone:    make(chan struct{}),
		closed:      make(chan struct{}),
		sdkCalls:    map[jsonrpc.ID]string{},
		own:         map[string]ownCall{},
		serverCalls: map[jsonrpc.ID]bool{},
	}
	go c.readLoop()
	return c
}

// SessionID is part of sdk.Connection; stdio has no sessions.
func (c *lineConn) SessionID() string { return "" }

// Read returns the next message for the SDK.
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-c.msgs:
		return m, nil
	case <-c.readDone:
		if c.readErr != nil && !errors.Is(c.readErr, io.EOF) && !errors.Is(c.readErr, os.ErrClosed) {
			return nil, c.readErr
		}
		return nil, io.EOF
	case <-c.closed:
		return nil, io.EOF
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends msg to the server, noting what it must expect back.
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.track(msg)
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.writeLine(ctx, data)
}

// track notes the SDK's outgoing requests (to match their answers), its
// cancellations (to forget them), and its answers to the server's
// requests (which free a slot).
func (c *lineConn) track(msg jsonrpc.Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.IsCall() {
			c.sdkCalls[m.ID] = m.Method
			return
		}
		if m.Method == "notifications/cancelled" {
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(m.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					if _, ok := c.sdkCalls[id]; ok {
						delete(c.sdkCalls, id)
						c.forgetLocked(id)
					}
				}
			}
		}
	case *jsonrpc.Response:
		delete(c.serverCalls, m.ID)
	}
}

// forgetLocked remembers id as given up on, so that a late answer to it
// is not reported.
func (c *lineConn) forgetLocked(id jsonrpc.ID) {
	if len(c.cancelled) == maxCancelled {
		c.cancelled = append(c.cancelled[:0], c.cancelled[1:]...)
	}
	c.cancelled = append(c.cancelled, id)
}

// writeLine writes one message and its newline, by ctx's deadline or
// writeTimeout, whichever is first.
func (c *lineConn) writeLine(ctx context.Context, data []byte) error {
	deadline := time.Now().Add(writeTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	select {
	case <-c.closed:
		return sdk.ErrConnectionClosed
	default:
	}
	if err := c.in.SetWriteDeadline(deadline); err != nil {
		return err
	}
	line := make([]byte, 0, len(data)+1)
	line = append(append(line, data...), '\n')
	if _, err := c.in.Write(line); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return fmt.Errorf("%w: writing %d bytes: %v", ErrUnresponsive, len(line), err)
		}
		return err
	}
	return nil
}

// Close closes both pipes; the reader stops. It is idempotent.
func (c *lineConn) Close() error {
	c.closeMu.Do(func() {
		close(c.closed)
		c.in.Close()
		c.out.Close()
	})
	return nil
}

// closeInput closes the server's stdin only (asking it to end), leaving
// its output to be read until it does.
func (c *lineConn) closeInput() {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.in.Close()
}

// call sends a request of opx's own and waits for its answer, ctx, or
// the end of the server's output. The result is returned as received. A
// JSON-RPC error answer is returned as a *jsonrpc.Error. callID names the
// pipeline's call in what is reported about the answer.
func (c *lineConn) call(ctx context.Context, method string, params any, callID string) (json.RawMessage, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id := ownIDPrefix + strconv.FormatInt(c.seq.Add(1), 10)
	wait := ownCall{callID: callID, answer: make(chan ownAnswer, 1)}
	c.mu.Lock()
	c.own[id] = wait
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.own, id)
		c.mu.Unlock()
	}()
	rid, _ := jsonrpc.MakeID(id)
	data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: rid, Method: method, Params: raw})
	if err != nil {
		return nil, err
	}
	if err := c.writeLine(ctx, data); err != nil {
		return nil, fmt.Errorf("sending %s: %w", method, err)
	}
	select {
	case a := <-wait.answer:
		return a.result, a.err
	case <-c.readDone:
		// The answer may have come just before the end.
		select {
		case a := <-wait.answer:
			return a.result, a.err
		default:
		}
		return nil, fmt.Errorf("%w: its output ended before it answered %s", ErrNotRunning, method)
	case <-ctx.Done():
		c.mu.Lock()
		c.forgetLocked(rid)
		c.mu.Unlock()
		// Best effort, and bounded: the server may be the reason.
		go func() {
			nctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			note, err := json.Marshal(map[string]any{"requestId": id, "reason": context.Cause(ctx).Error()})
			if err == nil {
				if data, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/cancelled", Params: note}); err == nil {
					c.writeLine(nctx, data)
				}
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// readLoop reads the server's output line by line until it ends.
func (c *lineConn) readLoop() {
	defer close(c.readDone)
	br := bufio.NewReaderSize(c.out, readBufferSize)
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
				scan.endToken()
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
		switch m.Method {
		case "notifications/tools/list_changed", "notifications/cancelled":
			c.deliver(m)
		case "notifications/message":
			if c.logf != nil {
				c.logf("log: %s", clip(string(m.Params), 512))
			}
		}
		return // others (progress, resources/updated, ...) opx does not use
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
