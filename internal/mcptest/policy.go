package mcptest

// FilesystemPolicy is a Shield policy as docs/mcp.md suggests for the
// filesystem server (Filesystem): its tools allowed in the workspace,
// never outside it.
const FilesystemPolicy = `version: 1
default: verify
deny:
  - name: mcp-outside-workspace
    tools: ["mcp__*"]
    outside_workspace: true
allow:
  - name: fs-in-workspace
    tools: ["mcp__fs__*"]
    paths: ["**"]
  - name: fs-listing
    tools: [mcp__fs__list_allowed_directories]
`
