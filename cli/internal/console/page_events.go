package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// keepAlive is how often an idle event stream sends a comment, so that a
// dead connection is noticed and proxies keep it open.
const keepAlive = 15 * time.Second

// events is the server-sent event stream of the ledger: one "entry" event
// per entry as it becomes durable (from `opx ledger follow`'s checked
// stream), carrying its seq, type and session only. The pages refresh
// themselves from it (console.js); recorded content never travels here.
func (s *Server) events(w http.ResponseWriter, r *http.Request) (any, error) {
	fl, ok := w.(http.Flusher)
	if !ok {
		return nil, fmt.Errorf("streaming unsupported")
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": opx ledger follow\n\n")
	fl.Flush()
	ctx := r.Context()
	sent := make(chan Followed, 64)
	done := make(chan error, 1)
	go func() {
		done <- s.src.Follow(ctx, func(f Followed) error {
			select {
			case sent <- f:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case f := <-sent:
			b, _ := json.Marshal(f)
			fmt.Fprintf(w, "id: %d\nevent: entry\ndata: %s\n\n", f.Seq, b)
			fl.Flush()
		case <-tick.C:
			fmt.Fprint(w, ": alive\n\n")
			fl.Flush()
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				// The chain broke: say so, and stop (the browser would
				// reconnect; the page tells the reader instead).
				fmt.Fprintf(w, "event: broken\ndata: %q\n\n", Neutral(err.Error()))
				fl.Flush()
			}
			return nil, nil
		case <-ctx.Done():
			return nil, nil
		}
	}
}
