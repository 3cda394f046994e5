// Command badserver is an MCP server on stdio that misbehaves on request,
// for tests of opx's MCP client (mcptest.BadServer builds it). It speaks
// newline-delimited JSON-RPC by hand, so it can break the protocol in
// ways an SDK would not let it.
//
// It starts well (answers initialize and tools/list) unless -start says
// otherwise:
//
//	-start exit       print to stderr and exit 7 before reading anything
//	-start silent     never answer initialize
//	-start garbage    answer initialize with a line that is not JSON
//	-start badtools   list tools opx must refuse beside one good one
//	-start biglist    answer tools/list with a 20 MB listing
//	-start noisy      write three lines of garbage first, then start well
//
// Its tools misbehave by name, when called:
//
//	echo        answers {"text": arguments.text} (well behaved)
//	crash       writes half an answer, then exits 3 (crash mid-call)
//	hang        never answers that call (still answers ping)
//	freeze      never answers anything again, and stops reading its input
//	big         answers with arguments.mb MB of text (default 100), id last
//	bigfirst    the same, id first
//	endless     writes a line that never ends, until killed
//	malformed   answers with a broken line that holds the call's id
//	badutf8     answers with text that is not UTF-8
//	garbage     writes arguments.lines lines of garbage (no id), then answers
//	unexpected  answers twice, the second time to an id never asked for,
//	            and sends 20 requests of its own
//	change      answers, then changes its tool list and says so (list_changed)
//	flood       writes arguments.mb MB to stderr (default 50), then answers
//	spawn       starts a child in its process group that writes to stderr
//	            forever, then answers
//	slow        answers after arguments.ms milliseconds
//	closeout    closes its output and lives on
//	bigrequest  sends a request of its own of 1 MB, then answers
package main
