package llm

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// httpTransport posts JSON bodies to one endpoint with fixed headers.
type httpTransport struct {
	client  *http.Client
	url     string
	headers map[string]string
}

func (t *httpTransport) send(ctx context.Context, body []byte) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range t.headers {
		req.Header.Set(k, v)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return nil, &HTTPError{Status: resp.StatusCode, RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After")), Body: strings.TrimSpace(string(b))}
	}
	return resp.Body, nil
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

// sseEvent is one server-sent event.
type sseEvent struct {
	name string
	data []byte
}

// maxSSELine bounds one line of a stream.
const maxSSELine = 4 << 20

// readSSE calls fn for each event of a text/event-stream. It returns
// io.ErrUnexpectedEOF if the stream ends inside an event.
func readSSE(r io.Reader, fn func(sseEvent) (stop bool, err error)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxSSELine)
	var ev sseEvent
	pending := false
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if pending {
				stop, err := fn(ev)
				if err != nil || stop {
					return err
				}
			}
			ev, pending = sseEvent{}, false
			continue
		}
		if line[0] == ':' {
			continue // comment / keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.name, pending = string(value), true
		case "data":
			if ev.data != nil {
				ev.data = append(ev.data, '\n')
			}
			ev.data, pending = append(ev.data, value...), true
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	if pending {
		stop, err := fn(ev)
		if err != nil || stop {
			return err
		}
	}
	return io.ErrUnexpectedEOF
}
