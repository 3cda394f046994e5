package ledger

// Hooks for the black-box tests and benchmarks of the tree.

// WithoutTree returns o with the tree switched off: the baseline of the
// append benchmarks, and the way tests make a ledger older than the tree.
func WithoutTree(o Options) Options {
	o.noTree = true
	return o
}

// SetTreeBuildBatch sets how many entries one transaction of a tree build
// adds, and returns a func restoring it.
func SetTreeBuildBatch(n int) func() {
	old := treeBuildBatch
	treeBuildBatch = n
	return func() { treeBuildBatch = old }
}

// WithFoldBatch returns o with projection folds (catch-up, rebuild) in
// transactions of n entries instead of 65536.
func WithFoldBatch(o Options, n int) Options {
	o.foldBatch = n
	return o
}
