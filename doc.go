// Package opx is the root of opx's module and holds no code: opx is the
// command tree in package cli (the binary is cli/opx), the engine in
// package engine, the ledger in package ledger, the judge in package
// shield.
//
// docs/architecture.md draws the house in words (the processes, one tool
// call through the pipeline, the ledger as the single source of truth,
// the floors the imports run down) and has one row per package;
// architecture_test.go here keeps that table, and the README's folder
// table, true to the packages that exist.
package opx
