package mcp

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/zeebo/blake3"

	"github.com/opx-dev/opx/ledger"
	"github.com/opx-dev/opx/ledger/event"
	"github.com/opx-dev/opx/shield"
)

// Bounds of a server's tool listing.
const (
	// MaxTools is the most tools opx takes from one server; the rest are
	// refused.
	MaxTools = 256
	// MaxListingBytes bounds a whole tools/list answer (all its pages).
	MaxListingBytes = 4 << 20
	// maxListPages bounds the pages of one listing.
	maxListPages = 32
	// MaxSchemaBytes bounds one tool's input schema; a larger one is
	// refused.
	MaxSchemaBytes = 64 << 10
	// MaxDescriptionBytes bounds the description offered to the model;
	// a longer one is cut (the recorded listing keeps it whole).
	MaxDescriptionBytes = 8 << 10
	// MaxToolNameBytes bounds a namespaced tool name, as model providers
	// do (OpenAI and Anthropic: 64).
	MaxToolNameBytes = 64
	// relistBurst and relistEvery bound how often a server that says its
	// tools changed is listed again: a burst, then one listing per
	// relistEvery; notifications in between are coalesced.
	relistBurst = 5
	relistEvery = 30 * time.Second
	// maxListings bounds the listings one start of a server gets
	// recorded (each up to MaxListingBytes): past it, its tools stay as
	// they are and its notifications are ignored, so that a server
	// cannot grow the ledger without end by changing its tools.
	maxListings = 50
)

// toolNameRE is what a server's tool name may be: what model providers
// accept in a function name.
var toolNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// listTools asks the server for its tools (every page, bounded) and
// returns what opx makes of them, the entry recording them and the
// listing's blob (nil when inline).
func (c *Conn) listTools(ctx context.Context) ([]Tool, *event.MCPToolsListed, []byte, error) {
	var (
		raws    []json.RawMessage
		total   int
		cursor  string
		refused []string
	)
	for page := 0; ; page++ {
		if page == maxListPages {
			refused = append(refused, fmt.Sprintf("(more pages: the listing was cut after %d)", maxListPages))
			break
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.lc.call(ctx, "tools/list", params, "")
		if err != nil {
			return nil, nil, nil, err
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			c.problems.add(problem{kind: "malformed", size: int64(len(raw)), detail: "tools/list result: " + clip(err.Error(), 200)})
			return nil, nil, nil, fmt.Errorf("%w: tools/list: %v", ErrMalformed, err)
		}
		for _, t := range res.Tools {
			if total+len(t) > MaxListingBytes {
				refused = append(refused, fmt.Sprintf("(more tools: the listing was cut at %d bytes)", MaxListingBytes))
				res.NextCursor = ""
				break
			}
			total += len(t)
			raws = append(raws, t)
		}
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	tools, more := makeTools(c.spec.Name, c.spec.Writable, raws)
	refused = append(more, refused...)
	listing := append([]byte(`{"tools":[`), bytes.Join(byteSlices(raws), []byte(","))...)
	listing = append(listing, "]}"...)
	content, blobHash, blob := event.Inline(string(listing))
	listed := &event.MCPToolsListed{
		Server: c.spec.Name, Instance: c.instance, Tools: []event.MCPTool{}, Refused: refused,
		Listing: content, ListingBlob: blobHash, Size: int64(len(listing)),
	}
	for _, t := range tools {
		listed.Tools = append(listed.Tools, t.MCPTool)
	}
	return tools, listed, blob, nil
}

func byteSlices(raws []json.RawMessage) [][]byte {
	out := make([][]byte, len(raws))
	for i, r := range raws {
		out[i] = r
	}
	return out
}

// ToolsFromListing rebuilds, from a recorded mcp.tools_listed's listing
// (its Listing, or the content of its ListingBlob), the Tools a Conn
// offered when it recorded it: the same checks, names, hashes and cut
// descriptions, so that a rerun offers the model exactly what it saw.
// The refused tools are returned with why, as recorded.
func ToolsFromListing(server string, writable bool, listing []byte) ([]Tool, []string, error) {
	if len(listing) > MaxListingBytes+(1<<20) {
		return nil, nil, fmt.Errorf("%w: a listing of %d bytes", ErrOversize, len(listing))
	}
	var l struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(listing, &l); err != nil {
		return nil, nil, fmt.Errorf("%w: listing: %v", ErrMalformed, err)
	}
	tools, refused := makeTools(server, writable, l.Tools)
	return tools, refused, nil
}

// makeTools turns the listed tools into Tools, sorted by name, and says
// which it refused and why.
func makeTools(server string, writable bool, raws []json.RawMessage) ([]Tool, []string) {
	var (
		tools   []Tool
		refused []string
		seen    = map[string]bool{}
	)
	for i, raw := range raws {
		var t struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
			Annotations *struct {
				ReadOnlyHint bool `json:"readOnlyHint"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			refused = append(refused, fmt.Sprintf("#%d: not a tool: %s", i, clip(err.Error(), 120)))
			continue
		}
		name := ToolName(server, t.Name)
		why := ""
		switch {
		case !toolNameRE.MatchString(t.Name):
			why = "its name is not letters, digits, '_' and '-'"
		case len(name) > MaxToolNameBytes:
			why = fmt.Sprintf("%s is over %d bytes", name, MaxToolNameBytes)
		case seen[t.Name]:
			why = "listed twice"
		case len(t.InputSchema) > MaxSchemaBytes:
			why = fmt.Sprintf("its input schema is over %d bytes", MaxSchemaBytes)
		case !utf8.Valid(raw):
			why = "not valid UTF-8"
		case !objectSchema(t.InputSchema):
			why = `its input schema is not a JSON Schema object with "type": "object"`
		case len(tools) == MaxTools:
			why = fmt.Sprintf("over %d tools", MaxTools)
		default:
			// What the model reads of a tool (its description, the
			// descriptions in its schema) passes the prompt-injection
			// heuristic results pass: a poisoned tool is not offered
			// (review #7). All of the tool is read, not only what opx's
			// agent is shown: an mcp-proxy client gets the tool as listed
			// (title, annotations, output schema, _meta) and may show
			// any of it to its model.
			why = poisoned(t.Description, raw)
		}
		if why != "" {
			refused = append(refused, clip(t.Name, 80)+": "+why)
			continue
		}
		seen[t.Name] = true
		sum := blake3.Sum256(t.InputSchema)
		tool := Tool{
			MCPTool: event.MCPTool{
				Name: name, Tool: t.Name, Mutating: writable, SchemaHash: hex.EncodeToString(sum[:]),
				ReadOnlyHint: t.Annotations != nil && t.Annotations.ReadOnlyHint,
			},
			Description: clip(t.Description, MaxDescriptionBytes),
			InputSchema: slices.Clone(t.InputSchema),
			Raw:         slices.Clone(raw),
		}
		tools = append(tools, tool)
	}
	slices.SortFunc(tools, func(a, b Tool) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return tools, refused
}

// objectSchema reports whether s is a JSON object whose "type" is
// "object", as MCP requires of an input schema.
func objectSchema(s json.RawMessage) bool {
	var v struct {
		Type any `json:"type"`
	}
	if t := bytes.TrimSpace(s); len(t) == 0 || t[0] != '{' || json.Unmarshal(t, &v) != nil {
		return false
	}
	return v.Type == "object"
}

// recordListing records a listing and makes it the current one.
func (c *Conn) recordListing(ctx context.Context, tools []Tool, listed *event.MCPToolsListed, blob []byte) error {
	var blobs [][]byte
	if blob != nil {
		blobs = append(blobs, blob)
	}
	if err := c.rec(ctx, ledger.Sync, c.session, listed, blobs...); err != nil {
		return err
	}
	c.mu.Lock()
	c.tools, c.listingHash = tools, listingHash(listed)
	c.mu.Unlock()
	return nil
}

// listingHash identifies a listing's content, to tell a real change
// from a server that only says so.
func listingHash(l *event.MCPToolsListed) string {
	h := blake3.New()
	fmt.Fprintf(h, "%d:%s:%s", l.Size, l.Listing, l.ListingBlob)
	for _, r := range l.Refused {
		fmt.Fprintf(h, "\x00%s", r)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// relistLoop lists the tools again when the server says they changed, at
// a bounded rate, and records the listing when it did change. A writable
// server's tools are listed at its next call instead (relistDue): it
// runs only inside calls (review #2).
func (c *Conn) relistLoop() {
	tokens := float64(relistBurst)
	last := time.Now()
	for {
		select {
		case <-c.relist:
		case <-c.done:
			return
		}
		now := time.Now()
		tokens = min(relistBurst, tokens+now.Sub(last).Seconds()/relistEvery.Seconds())
		last = now
		if tokens < 1 {
			wait := time.Duration((1 - tokens) * float64(relistEvery))
			if !waitFor(c.done, wait) {
				tokens, last = 1, time.Now()
			} else {
				return
			}
		}
		tokens--
		if c.frz != nil {
			c.relistDue.Store(true)
			continue
		}
		if !c.relistNow() {
			return
		}
	}
}

// relistNow lists the tools again and records the listing when it
// changed; false once the server's tools are no longer listed (its
// listings of this start, or their budget, are spent).
func (c *Conn) relistNow() bool {
	c.listMu.Lock()
	defer c.listMu.Unlock()
	if c.recorded == -1 {
		return false
	}
	if c.recorded+1 >= maxListings { // +1: the listing Start recorded
		c.recorded = -1
		c.problems.add(problem{kind: "unexpected", detail: fmt.Sprintf("its tools changed %d times: no longer listed until it restarts", maxListings-1)})
		return false
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), c.timeout, ErrTimeout)
	defer cancel()
	tools, listed, blob, err := c.listTools(ctx)
	if err == nil {
		c.mu.Lock()
		same := listingHash(listed) == c.listingHash
		c.mu.Unlock()
		if !same {
			if berr := c.budget.take(listed.Size); berr != nil {
				c.recorded = -1
				c.problems.add(problem{kind: "unexpected", size: listed.Size,
					detail: "its tools changed, not listed again until it restarts: " + clip(berr.Error(), 200)})
				return false
			}
			err = c.recordListing(ctx, tools, listed, blob)
			c.recorded++
		}
	}
	if err != nil && !c.ended() {
		c.log.logf("listing its tools again: %v", err)
	}
	return true
}

// poisoned says why Shield's prompt-injection heuristic flags what a
// tool tells the model (its description, then every key and string of
// tool, the tool as listed), or "".
func poisoned(description string, tool json.RawMessage) string {
	var v any
	var texts []string
	if json.Unmarshal(tool, &v) == nil {
		var walk func(any)
		walk = func(x any) {
			switch x := x.(type) {
			case map[string]any:
				for k, y := range x {
					texts = append(texts, k)
					walk(y)
				}
			case []any:
				for _, y := range x {
					walk(y)
				}
			case string:
				texts = append(texts, x)
			}
		}
		walk(v)
	}
	for _, text := range []string{description, strings.Join(texts, "\n")} {
		if rule, reason := shield.JudgeResult(text); rule == shield.RulePromptInjection {
			return "Shield's " + rule + " rule flags what it tells the model: " + reason
		}
	}
	return ""
}
