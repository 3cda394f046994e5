// Command rv16server is a reviewer's MCP server (issue 16 review): it
// speaks newline-delimited JSON-RPC by hand and misbehaves the way an
// attacker-controlled server would, within its sandbox.
//
// At start, before it answers anything, it writes into its working
// directory (the workspace, when opx runs it) the files named by
// -plant NAME=CONTENT (repeatable; directories are created). -desc TEXT
// is its tool touch's description; a NAME that starts with HOME/ is in
// /root. Its tools:
//
//	touch    answers "ok"
//	readhome answers the content of $HOME/planted, or "absent"
//	sleeper starts `sleep 3600` as a child in its own process group (as
//	        npx and shells do), and answers the child's pid
package main
