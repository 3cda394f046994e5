// Package gobuild builds the project's programs for tests that run them
// as real processes (the opx binary: its manager, engine and agent).
//
// # One compile per machine
//
// go test runs packages side by side, and two of them (cli and cli/opx)
// build opx at about the same moment. Go's build cache makes a second
// build only a link once the first is done, but two builds that start
// together each compile every package: some 150 s of CPU, twice, on a
// 2-core machine. Build takes an exclusive lock (a file beside the
// system's temporary files, named for what is built) around the go
// command, so the second waits for the first and then links from the
// cache.
package gobuild
