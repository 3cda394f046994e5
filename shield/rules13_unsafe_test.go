package shield

import "testing"

// Rules 13: code made unsafe by small edits, and the look-alikes.
func TestRules13_UnsafeEdits(t *testing.T) {
	s := testShield()
	const weak, none = "appsec:control-weakened", "heuristics:none"
	for _, c := range []struct{ name, p, old, new, want string }{
		{"safeTransferFrom made transferFrom", "contracts/src/Escrow.sol", "        token.safeTransferFrom(msg.sender, address(this), amount);", "        token.transferFrom(msg.sender, address(this), amount);", weak},
		{"yaml.safe_load made yaml.load", "app/config.py", "    cfg = yaml.safe_load(fh)", "    cfg = yaml.load(fh)", weak},
		{"nonReentrant taken", "contracts/src/Escrow.sol", "    function release(uint256 id) external nonReentrant {", "    function release(uint256 id) external {", weak},
		{"a require narrowed", "contracts/src/Escrow.sol", `        require(!d.done && block.timestamp >= d.releaseAt, "locked");`, `        require(!d.done, "locked");`, weak},
		{"tx.origin for msg.sender", "contracts/src/Escrow.sol", `        require(msg.sender == d.payer || msg.sender == owner(), "not allowed");`, `        require(tx.origin == d.payer || tx.origin == owner(), "not allowed");`, weak},
		{"a plain call made safe", "contracts/src/Escrow.sol", "        token.transferFrom(msg.sender, address(this), amount);", "        token.safeTransferFrom(msg.sender, address(this), amount);", none},
		{"a require widened", "contracts/src/Escrow.sol", `        require(!d.done, "locked");`, `        require(!d.done && block.timestamp >= d.releaseAt, "locked");`, none},
		{"a modifier added", "contracts/src/Escrow.sol", "    function release(uint256 id) external {", "    function release(uint256 id) external nonReentrant {", none},
		{"html_safe is the raw rule's, not this", "app/helpers/x_helper.rb", "    name", "    name", none},
		{"a rename that drops a word", "src/util.py", "def is_safe_path(p):", "def is_path(p):", none},
	} {
		v := rulesVerdict(s, editAct(c.p, c.old, c.new))
		if v.Rule != c.want {
			t.Errorf("%s: got %s %s (%s), want %s", c.name, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}

// Rules 13: a bound lifted to its type's maximum, a pipeline's manual
// gate removed, and their look-alikes.
func TestRules13_BoundsAndGates(t *testing.T) {
	s := testShield()
	const weak, none = "appsec:control-weakened", "heuristics:none"
	for _, c := range []struct{ name, p, old, new, want string }{
		{"OCaml bound to max_int", "tools/recon/lib/camt.ml", "let max_entries = 200_000", "let max_entries = max_int", weak},
		{"Java limit to MAX_VALUE", "src/main/java/Upload.java", "    static final int MAX_PARTS = 64;", "    static final int MAX_PARTS = Integer.MAX_VALUE;", weak},
		{"Rust depth to usize::MAX", "src/parse.rs", "const MAX_DEPTH: usize = 32;", "const MAX_DEPTH: usize = usize::MAX;", weak},
		{"GitLab deploy made automatic", "ci/deploy.yml", "  - if: $CI_COMMIT_TAG\n    when: manual", "  - if: $CI_COMMIT_BRANCH\n    when: always", weak},
		{"a bound raised a little", "tools/recon/lib/camt.ml", "let max_entries = 200_000", "let max_entries = 400_000", none},
		{"a manual gate kept", "ci/deploy.yml", "  - if: $CI_COMMIT_TAG\n    when: manual", "  - if: $CI_COMMIT_TAG =~ /^v/\n    when: manual", none},
	} {
		v := rulesVerdict(s, editAct(c.p, c.old, c.new))
		if v.Rule != c.want {
			t.Errorf("%s: got %s %s (%s), want %s", c.name, v.Decision, v.Rule, v.Reason, c.want)
		}
	}
}
