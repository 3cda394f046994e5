// Package race reports whether the program was built with the race
// detector (go test -race). Tests use it to scale their randomized
// sweeps: code compared with a reference on one goroutine gives the
// detector nothing to find, while it runs some ten times slower, and
// each run draws anew, so successive runs cover what one run leaves.
package race
