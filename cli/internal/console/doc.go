// Package console is `opx serve`: an investigator's console in the
// browser over one ledger, read offline or through the running engine
// exactly as the review commands read it.
//
// # What it owns
//
//   - The HTTP server: its listener rules (loopback unless told, TLS or an
//     explicit --insecure-listen otherwise), the access token, the
//     same-origin check of every state-changing request, and the security
//     headers of every response (server.go, guard.go).
//   - The pages, one handler and one template each, registered in one
//     table (pages.go): a new page is a Page value added there and a
//     templates/<name>.html.
//   - How recorded content is shown: escaped by html/template, with ANSI
//     escapes and bidi/format controls made visible and long values cut
//     at ValueLimit with a download of the whole (neutral.go).
//   - The console's writes, each the Source's (the code of the command
//     that makes it from a terminal): an answer to an approval
//     (page_approvals.go), an annotation (page_annotate.go).
//   - The event stream the pages follow (page_events.go): each entry's
//     seq, type and session as it becomes durable, never its content.
//   - The fleet (fleet.go): a collector's sources and alerts, and a
//     console per source under /sources/<id>/ (every link of a page is
//     under its Server's base path).
//   - Rendered pages kept while the Source's answer they came from is
//     (the Source keeps it while the ledger's head does not move), and
//     the listing's rows kept by the row they render (a new entry changes
//     one session's row at most).
//   - The side by side of two sessions' tool calls (page_compare.go).
//
// It does not read the ledger itself: a Source (source.go), built by the
// cli package from the same code as `opx sessions`, `opx replay`,
// `opx report`, `opx ledger prove` and `opx ledger export`, verifies and
// returns what the pages show. Nothing is shown that the Source did not
// check; a step's badge says how it was checked.
//
// # What it may import
//
// The standard library, ledger, ledger/event, ledger/tlog, replay,
// replay/projection and chronicle (for the types it renders), fleet
// (CheckLedgerID) and engine/redrive for one type (WhatIfReport, the
// what-if page's data; the re-judging itself is the Source's, in cli).
// Never the cli package (which imports it), the engine's core or Shield.
//
// # Invariants
//
//   - Every request carries the token (query on the first visit, then the
//     cookie it sets); it is compared in constant time. A request without
//     it is refused with 403 before any handler runs.
//   - Every request other than GET and HEAD also needs a Sec-Fetch-Site
//     of same-origin, or, without one, a same-origin Origin or Referer.
//   - Every response carries a Content-Security-Policy that allows script
//     from 'self' only (the embedded console.js; no inline script), no
//     remote resource, and frame-ancestors 'none'.
//   - HTML is written by html/template, except a timeline step's badge
//     (badge.go: one per step, so written in Go for speed), where every
//     value is escaped by hand for where it goes; its test holds that.
//   - Off-the-record content is never shown: the ledger withholds it, and
//     the pages say so.
package console
