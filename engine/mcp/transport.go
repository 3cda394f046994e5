package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
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
	// maxServerRequestBytes bounds one request of the server's (ping and
	// roots/list are small; sampling and elicitation opx refuses anyway),
	// so the requests in flight hold little.
	maxServerRequestBytes = 64 << 10
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
//   - Of the server's notifications only the cancellation of one of its
//     requests in flight reaches the SDK (whose handler queue is
//     unbounded); tools/list_changed calls toolsChanged, which
//     coalesces; logging goes to the log; the rest are dropped. At most
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
	// toolsChanged is called when the server says its tools changed; it
	// must not block.
	toolsChanged func()
	// hold, if set, is called before each request of opx's own is sent
	// and its release once it is answered or given up on (a writable
	// server is frozen between them: freezer).
	hold func() (release func())

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
	c := makeLineConn(in, out, maxLine, report, logf)
	go c.readLoop(out)
	return c
}

// makeLineConn builds a lineConn without starting its reader.
func makeLineConn(in, out *os.File, maxLine int, report func(problem), logf func(string, ...any)) *lineConn {
	c := &lineConn{
		in: in, out: out, maxLine: maxLine, report: report, logf: logf,
		msgs:        make(chan jsonrpc.Message),
		readDone:    make(chan struct{}),
		closed:      make(chan struct{}),
		sdkCalls:    map[jsonrpc.ID]string{},
		own:         map[string]ownCall{},
		serverCalls: map[jsonrpc.ID]bool{},
	}
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
	if c.hold != nil {
		release := c.hold()
		defer release()
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
