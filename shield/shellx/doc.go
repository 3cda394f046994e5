// Package shellx reads a shell command line the way a shell would run it,
// without running anything: it parses the line (mvdan.cc/sh/v3/syntax) and
// lists every simple command it contains, wherever it is nested
// (pipelines, lists, subshells, blocks, function bodies, command and
// process substitutions, here-documents fed to a shell, the -c payloads of
// sh and bash, eval, data decoded and piped into a shell), with each
// word's value as far as it can be known statically. The string literals
// of interpreter payloads (python -c, node -e, perl -e, ruby -e) and of
// decoded data are listed for the caller to search.
//
// It is pure and bounded: the same line always gives the same Analysis,
// nothing on the filesystem or in the environment is consulted (the home
// directory is the caller's), and the work done is bounded whatever the
// line's size or shape (Limits).
package shellx
