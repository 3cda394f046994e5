package event

import (
	"encoding/hex"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/zeebo/blake3"
)

// Off-the-record sessions keep every entry's envelope and replace each
// content member with a keyed commitment (docs/otr.md). This file holds
// the commitment's construction and its written form; withhold_entries.go
// says, per entry type, which members are withheld.

// WithheldPrefix starts every withheld member: the whole form is
//
//	otr:v1:<size>:<64 hex>
//
// where size is the withheld content's length in bytes (decimal, no
// leading zeros) and the hex is its keyed commitment. A member of an
// off-the-record session in this form carries no content.
const WithheldPrefix = "otr:v1:"

// CommitContext prefixes the BLAKE3 derive_key context of each domain's
// key: a domain's key is DeriveKey(CommitContext + domain, session key).
const CommitContext = "opx otr v1 "

// Commitment domains. Members that hold the same kind of content share a
// domain on purpose, so equal contents commit equally within one session
// (the user's message in client.message and engine.process_request; one
// call's arguments in agent.tool_call, tool.proposed and
// approval.requested; one action hash in tool.proposed, shield.verdict
// and exec.started, which is what the causality checks compare).
const (
	DomainUserText   = "user-text"   // a user's message
	DomainModelText  = "model-text"  // what a model or agent wrote
	DomainThought    = "thought"     // a thought's summary and detail
	DomainArguments  = "arguments"   // tool call arguments
	DomainResult     = "result"      // a tool's result
	DomainActionHash = "action-hash" // BLAKE3 of tool and arguments (guessable)
	DomainLLMRequest = "llm-request" // a model request body (blob hash)
	DomainLLMBody    = "llm-body"    // a model response body (blob hash)
	DomainReason     = "reason"      // verdict, approval and cancel reasons
	DomainError      = "error"       // error texts, which quote content
	DomainTitle      = "title"       // session titles
	DomainMemory     = "memory"      // memory the agent flushed
	DomainTask       = "task"        // a sub-agent's task
	DomainPath       = "path"        // workspace paths and symlink targets
	DomainFileHash   = "file-hash"   // BLAKE3 of a file's content (guessable)
	DomainSnapshot   = "snapshot"    // snapshot content and manifests (blob hash)
	DomainName       = "name"        // a tool or tool group name the engine does not know
	DomainModel      = "model"       // a model name the engine was not configured with
	DomainCallID     = "call-id"     // a call id that is not a plain bounded id
	DomainMCP        = "mcp"         // what an MCP server listed or a proxied request carried
)

// Known tells Withhold which names the recording engine knows: those it
// keeps in clear. A tool name, tool group or model name is otherwise
// whatever a model or agent wrote (an unknown tool a model made up, a
// sub-agent's model chosen by its parent), so it is withheld like any
// other content. A nil function knows nothing.
type Known struct {
	Tool  func(name string) bool // the engine's registered tools
	Group func(name string) bool // their groups (load_tools)
	Model func(name string) bool // the models engine.started names
}

// plainID matches a call id kept in clear: the shape of the ids model
// providers give (toolu_…, call_…), at most 64 bytes. Any other call id
// is withheld; its commitment stands for it consistently in the session.
var plainID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)

// Commitments makes the keyed commitments of one off-the-record session.
// The key lives only in the engine's memory: without it a commitment
// reveals nothing of its content but the size, and no one can compute
// one for a guess.
type Commitments struct {
	key   [32]byte
	known Known
}

// NewCommitments commits under key (32 random bytes, one per session).
func NewCommitments(key [32]byte) *Commitments { return &Commitments{key: key} }

// WithKnown sets the names kept in clear and returns c.
func (c *Commitments) WithKnown(k Known) *Commitments {
	c.known = k
	return c
}

// name returns a tool or group name as recorded: in clear when known,
// else withheld (DomainName). "" stays "".
func (c *Commitments) name(known func(string) bool, n string) string {
	if n == "" || known != nil && known(n) {
		return n
	}
	return c.Text(DomainName, n)
}

// Tool returns a tool name as recorded: in clear when the engine knows
// it, else withheld.
func (c *Commitments) Tool(n string) string { return c.name(c.known.Tool, n) }

// tools is Tool for each name of a list.
func (c *Commitments) tools(ns []string) []string {
	if ns == nil {
		return nil
	}
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = c.Tool(n)
	}
	return out
}

// groups withholds each group name the engine does not know.
func (c *Commitments) groups(ns []string) []string {
	if ns == nil {
		return nil
	}
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = c.name(c.known.Group, n)
	}
	return out
}

// Model returns a model name as recorded: in clear when the engine was
// configured with it, else withheld (DomainModel).
func (c *Commitments) Model(n string) string {
	if n == "" || c.known.Model != nil && c.known.Model(n) {
		return n
	}
	return c.Text(DomainModel, n)
}

// CallID returns a call id as recorded: in clear when it is a plain
// bounded id (plainID), else withheld (DomainCallID). Equal ids give equal
// forms within the session, so calls stay linked.
func (c *Commitments) CallID(id string) string {
	if id == "" || plainID.MatchString(id) {
		return id
	}
	return c.Text(DomainCallID, id)
}

// sum is the keyed BLAKE3-256 of b under domain's key.
func (c *Commitments) sum(domain string, b []byte) []byte {
	var dk [32]byte
	blake3.DeriveKey(CommitContext+domain, c.key[:], dk[:])
	h, err := blake3.NewKeyed(dk[:])
	if err != nil {
		panic(err) // a 32-byte key is always accepted
	}
	h.Write(b)
	return h.Sum(nil)
}

// Text returns the withheld form of s under domain; "" stays "" (nothing
// to withhold).
func (c *Commitments) Text(domain, s string) string {
	if s == "" {
		return ""
	}
	return WithheldPrefix + strconv.Itoa(len(s)) + ":" + hex.EncodeToString(c.sum(domain, []byte(s)))
}

// Blob returns the withheld form of a blob member: the commitment of the
// blob's hash (h, 64 hex) with the content's size. The blob itself is not
// stored; committing to its hash binds the content as firmly (BLAKE3 is
// collision resistant) and needs no copy of it. "" stays "".
func (c *Commitments) Blob(domain, h string, size int64) string {
	if h == "" {
		return ""
	}
	return WithheldPrefix + strconv.FormatInt(max(size, 0), 10) + ":" + hex.EncodeToString(c.sum(domain, []byte(h)))
}

// Hash returns the keyed commitment of a 64-hex hash as 64 hex: the same
// shape as the hash it stands for, so members that must be hashes stay
// hashes, and equal hashes stay equal within the session. "" stays "".
func (c *Commitments) Hash(domain, h string) string {
	if h == "" {
		return ""
	}
	return hex.EncodeToString(c.sum(domain, []byte(h)))
}

// Withheld reports whether s is a withheld member (WithheldPrefix form,
// exactly) and the size of the content it stands for.
func Withheld(s string) (size int64, ok bool) {
	rest, found := strings.CutPrefix(s, WithheldPrefix)
	if !found {
		return 0, false
	}
	num, mac, found := strings.Cut(rest, ":")
	if !found || num == "" || len(num) > 19 || (len(num) > 1 && num[0] == '0') || !isLowerHex(mac, 64) {
		return 0, false
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// Display returns s for a reader: a withheld member as "[off the record:
// N bytes]", anything else unchanged.
func Display(s string) string {
	if n, ok := Withheld(s); ok {
		return fmt.Sprintf("[off the record: %d bytes]", n)
	}
	return s
}

// withheldIn finds withheld members embedded in a longer text (a
// summary that quotes one, a rendered page).
var withheldIn = regexp.MustCompile(`otr:v1:(0|[1-9][0-9]{0,18}):[0-9a-f]{64}`)

// DisplayText is Display for every withheld member embedded in s. A
// reader applies it to what it prints of an off-the-record session; the
// form is plain text, so a normal session's text can spell it too: the
// session's mode (session.created) says whether anything was withheld.
func DisplayText(s string) string {
	if !strings.Contains(s, WithheldPrefix) {
		return s
	}
	return withheldIn.ReplaceAllStringFunc(s, Display)
}
