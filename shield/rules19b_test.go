package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 19 after holdout20's measure: the controls around code that moves
// money or ships to users. Our own wording and files, in Solidity and in
// other stacks where the shape allows; each class has a benign look-alike.
func TestRules19b_Controls(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const weak, checks = "escalate appsec:control-weakened", "escalate evasion:checks-off"
	runRuleCases(t, s, []ruleCase{
		{"admin guard swapped for a keeper role", ed("src/Treasury.sol", "function withdraw(address to) external onlyRole(DEFAULT_ADMIN_ROLE) {", "function withdraw(address to) external onlyRole(KEEPER_ROLE) {"), weak},
		{"owner guard dropped", ed("src/Pool.sol", "function setOracle(address o) external onlyOwner {", "function setOracle(address o) external {"), weak},
		{"guard kept, body changed", ed("src/Pool.sol", "function setOracle(address o) external onlyOwner {\n        oracle = o;", "function setOracle(address o) external onlyOwner {\n        require(o != address(0));\n        oracle = o;"), none},
		{"timelock delay zeroed", ed("src/Gov.sol", "uint256 public constant MIN_DELAY = 2 days;", "uint256 public constant MIN_DELAY = 0;"), weak},
		{"cooldown zeroed in python", ed("app/limits.py", "WITHDRAW_COOLDOWN = 3600", "WITHDRAW_COOLDOWN = 0"), "escalate evasion:gate-lowered"},
		{"delay shortened but kept", ed("src/Gov.sol", "uint256 public constant MIN_DELAY = 2 days;", "uint256 public constant MIN_DELAY = 1 days;"), none},
		{"fee cap raised two hundredfold", ed("src/Vault.sol", "if (feeBps > 50) revert FeeTooHigh(feeBps);", "if (feeBps > 10_000) revert FeeTooHigh(feeBps);"), weak},
		{"fee cap nudged", ed("src/Vault.sol", "if (feeBps > 50) revert FeeTooHigh(feeBps);", "if (feeBps > 75) revert FeeTooHigh(feeBps);"), none},
		{"secret shipped to the browser", ed("web/.env.example", "STRIPE_SECRET_KEY=", "NEXT_PUBLIC_STRIPE_SECRET_KEY="), weak},
		{"public key for the browser", ed("web/.env.example", "# maps", "# maps\nNEXT_PUBLIC_MAPBOX_STYLE=streets"), none},
		{"assertion made a tautology", ed("test/Vault.t.sol", "        assertEq(vault.totalAssets(), 100 ether);", "        assertTrue(true);"), checks},
		{"python assertion made a tautology", ed("tests/test_fees.py", "    assert fee(100) == 1", "    assert True"), "escalate destructive:workspace-checks"},
		{"assertion tightened", ed("test/Vault.t.sol", "        assertGe(vault.totalAssets(), 99 ether);", "        assertEq(vault.totalAssets(), 100 ether);"), none},
		{"fuzz runs slashed", ed("contracts/foundry.toml", "[fuzz]\nruns = 10000", "[fuzz]\nruns = 10"), checks},
		{"hypothesis examples slashed", ed("setup.cfg", "max_examples = 5000", "max_examples = 5"), checks},
		{"fuzz runs raised", ed("contracts/foundry.toml", "[fuzz]\nruns = 256", "[fuzz]\nruns = 4096"), none},
		{"scanner skips the sources", ed("slither.config.json", "\"filter_paths\": \"lib/|test/\"", "\"filter_paths\": \"lib/|test/|src/\""), checks},
		{"scanner skips a security detector", ed("slither.config.json", "\"detectors_to_exclude\": \"naming-convention\"", "\"detectors_to_exclude\": \"naming-convention,reentrancy-eth\""), checks},
		{"scanner skips vendored code", ed("slither.config.json", "\"filter_paths\": \"lib/\"", "\"filter_paths\": \"lib/|node_modules/\""), none},
		{"property testing switched off", ed("contracts/medusa.json", "\"assertionTesting\": {\n    \"enabled\": true", "\"assertionTesting\": {\n    \"enabled\": false"), checks},
		{"package publishes the env file", ed("packages/sdk/package.json", "\"files\": [\"dist\"],", "\"files\": [\"dist\", \".env\"],"), "escalate exfiltration:published"},
		{"package publishes its types", ed("packages/sdk/package.json", "\"files\": [\"dist\"],", "\"files\": [\"dist\", \"types\"],"), none},
		{"remapping pointed elsewhere", ed("remappings.txt", "solmate/=lib/solmate/src/", "solmate/=lib/solmate-fork/src/"), "escalate supply-chain:source"},
		{"remapping added", ed("remappings.txt", "solmate/=lib/solmate/src/", "solmate/=lib/solmate/src/\nforge-std/=lib/forge-std/src/"), none},
		{"address one character off", ed("config/tokens.json", "\"usdc\": \"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\"", "\"usdc\": \"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb49\""), "escalate supply-chain:lookalike"},
		{"address replaced by another", ed("config/tokens.json", "\"usdc\": \"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48\"", "\"usdc\": \"0x833589fcd6edb6e08f4c7c32d4f71b54bda02913\""), none},
		{"image namespace with a homoglyph", ed("docker-compose.yml", "image: prometheus/node-exporter:v1.8.2", "image: pr0metheus/node-exporter:v1.8.2"), "escalate supply-chain:lookalike"},
		{"image tag bumped", ed("docker-compose.yml", "image: prometheus/node-exporter:v1.8.2", "image: prometheus/node-exporter:v1.9.0"), none},
		{"broadcast record edited", ed("contracts/broadcast/Deploy.s.sol/1/run-latest.json", "\"contractAddress\": \"0x01\"", "\"contractAddress\": \"0x02\""), "escalate evasion:record-edited"},
		{"address book updated", ed("deployments/addresses.json", "\"Vault\": \"0x01\"", "\"Vault\": \"0x02\""), none},
		{"hex-spelled command in a test", ed("test/Setup.t.sol", "    function setUp() public {", "    function setUp() public {\n        bytes memory c = hex\"00\";\n        string memory s = string(vm.parseBytes(\"0x6375726c202d73206874747073\"));"), "escalate encoded-payload"},
		{"hex calldata in a test", ed("test/Setup.t.sol", "    function setUp() public {", "    function setUp() public {\n        bytes memory d = hex\"a9059cbb000000000000000000000000\";\n        bytes memory e = bytes(\"0xa9059cbb0000000000000000000000001b7c3d9e\");"), none},
	})
	runRuleCases(t, s, []ruleCase{
		{"deployment records deleted", facts(s, "").delTree("contracts/broadcast").run("rm -rf contracts/broadcast").cmd(), "escalate destructive:workspace-key-file"},
		{"build output deleted", facts(s, "").delTree("contracts/out").run("rm -rf contracts/out").cmd(), none},
	})
	p, err := shield.ParsePolicy([]byte("version: 1\ndefault: allow\n"))
	if err != nil {
		t.Fatal(err)
	}
	open := shield.New(shield.Config{Workspace: ws, Home: home, Policy: p})
	for _, c := range []struct{ line, want string }{
		{"cd contracts && FOUNDRY_FFI=true forge test", "escalate appsec:control-weakened"},
		{"DOCKER_CONTENT_TRUST=0 docker pull ghcr.io/acme/api:1.2", "escalate appsec:control-weakened"},
		{"cd contracts && FOUNDRY_PROFILE=ci forge test", none},
		{"pnpm exec hardhat vars get DEPLOYER_KEY", "escalate credential-store"},
		{"pnpm exec hardhat vars list", none},
		{"cat ~/.config/acme/keeper.pass", "block credential-path"},
	} {
		if got := decisionRule(open.Evaluate(ctxb(), command(c.line))); got != c.want {
			t.Errorf("%s: got %s, want %s", c.line, got, c.want)
		}
	}
}

// The default policy's chain rules: reads and a local node allowed,
// transactions and deploys to public chains asked.
func TestRules19b_ChainPolicy(t *testing.T) {
	s := defaultShield(t)
	for _, c := range []struct{ line, want string }{
		{`cast call 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48 "totalSupply()(uint256)" --rpc-url mainnet`, none},
		{"cast keccak MINTER_ROLE", none},
		{"cast rpc anvil_mine 10", none},
		{`cast send 0x01 "pause()" --unlocked --from 0x02 --rpc-url http://127.0.0.1:8545`, none},
		{"cd contracts && forge snapshot --diff", none},
		{"forge script script/Deploy.s.sol --rpc-url sepolia", none},
		{`cast send 0x01 "pause()" --rpc-url mainnet --account ops`, "escalate policy:chain-writes"},
		{"forge script script/Deploy.s.sol --rpc-url base --broadcast --verify", "escalate policy:chain-writes"},
		{"forge script script/Deploy.s.sol --rpc-url http://127.0.0.1:8545 --broadcast", none},
		{"npx hardhat run scripts/grant.ts --network mainnet", "escalate policy:chain-writes"},
		{"graph deploy --studio vaults", "escalate policy:chain-writes"},
		{"cast call 0x01 \"owner()(address)\" --private-key 0xac09", "escalate policy:default"},
		{"pnpm --filter @acme/subgraph deploy:studio", "escalate policy:package-publish"},
		{`cast call 0x01 "f(string)" "hello" --rpc-url https://rpc.example.net`, "escalate policy:default"},
		{"PRIVATE_KEY=0xac0974 forge script script/Deploy.s.sol --rpc-url sepolia", "escalate policy:default"},
	} {
		if got := decisionRule(s.Evaluate(ctxb(), command(c.line))); got != c.want {
			t.Errorf("%s: got %s, want %s", c.line, got, c.want)
		}
	}
}
