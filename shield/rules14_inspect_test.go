package shield_test

import "testing"

// Rules 14 (session 19): any command-line client's verbs that only read or
// report are allowed by the default policy (toolchain: inspect); a verb
// that changes something, a credential holder, a secret store, an
// interpreter or task runner, an address elsewhere, production, are not.
// Our own wording, in clients no rule names.
func TestPolicy_InspectVerbs(t *testing.T) {
	const ok = "allow policy:inspect-verbs"
	const asked = "escalate policy:default"
	runFinalCases(t, []ruleCase{
		// Reading and reporting, through namespace words.
		{"queue listing", command("rabbitmqadmin list queues name messages"), ok},
		{"workflow engine listing", command("cadence --domain billing workflow list --open"), ok},
		{"error tracker releases", command("bugsnag-cli releases list --project web"), ok},
		{"mobile devices", command("idevice_id devices"), ok},
		{"gitops diff", command("fluxctl diff kustomization apps --path ./deploy/dev"), ok},
		{"pipeline validation", command("circleci config validate"), ok},
		{"job log", command("nomad-pack job logs web"), ok},
		{"broker consumer lag, verb as an option", command("redpanda-cli --brokers 127.0.0.1:9092 --describe --group billing"), ok},
		{"local query", command("promtool query instant http://127.0.0.1:9090 up"), ok},
		{"status", command("ollama ps"), ok},
		// What they must not let through.
		{"a release created", command("bugsnag-cli releases new list"), asked},
		{"a subcommand after a flag", command("circleci --verbose create list"), asked},
		{"an option that creates", command("redpanda-cli --brokers 10.0.0.7:9092 --create --topic x"), asked},
		{"a job retried", command("nomad-pack job retry web"), asked},
		{"connections printed", command("dagctl connections get warehouse -o json"), asked},
		{"variables listed", command("ciclient variables list --project web"), asked},
		{"tokens listed", command("registryctl tokens list"), asked},
		{"a secret store read", command("gopass show -o prod/db"), "block credential-path"},
		{"an interpreter running a file called list", command("elixir list"), asked},
		{"a task runner's target", command("poe status"), asked},
		{"another host", command("promtool query instant http://10.2.3.4:9090 up"), asked},
		{"production", command("fluxctl diff kustomization apps --context prod"), asked},
		{"a URL of code", command("bugsnag-cli releases list --from https://evil.example/x"), asked},
		{"opx itself", command("opx ledger verify"), asked},
		{"an unknown verb", command("rabbitmqadmin purge queue name=jobs"), asked},
		{"three namespace words deep", command("zz alpha beta gamma list"), asked},
	})
}

// TestPolicy_SecretStoreStatus: a secret store's status, identity and
// version are allowed; its reads are not (credential-print blocks them).
func TestPolicy_SecretStoreStatus(t *testing.T) {
	const ok = "allow policy:secret-store-status"
	runFinalCases(t, []ruleCase{
		{"vault sealed?", command("vault status"), ok},
		{"op identity", command("op whoami"), ok},
		{"doppler names only", command("doppler secrets --only-names -c dev"), ok},
		{"vault read", command("vault kv get secret/app"), "block credential-print"},
		{"op read", command("op read op://dev/db/password"), "block credential-print"},
		{"vault token created", command("vault token create -policy=admin"), "escalate policy:default"},
	})
}

// TestPolicy_KubectlGlobalFlags: kubectl's read verbs with a context or a
// namespace before them are the containers rule's; its changes and
// secrets are not.
func TestPolicy_KubectlGlobalFlags(t *testing.T) {
	const ok = "allow policy:containers"
	runFinalCases(t, []ruleCase{
		{"pods of a context", command("kubectl --context staging -n web get pods -o wide"), ok},
		{"logs of a context", command("kubectl --context=dev-eu --namespace web logs deploy/api --since=10m"), ok},
		{"a delete", command("kubectl --context staging -n web delete pod api-1"), "escalate policy:default"},
		{"a secret's value", command("kubectl --context staging -n web get secret db -o yaml"), "escalate policy:cluster-secrets"},
	})
}

// TestPolicy_WrappedProgramsMatchedAsThemselves: a program a wrapper runs
// (timeout, env, nice, xargs, find -exec …) is matched by the policy as
// its own line: the wrapper's allow rule does not cover it, and a verify
// rule for it applies. Before rules 14, `env X=1 npm publish` was allowed
// by text-and-inspection's env, past package-publish.
func TestPolicy_WrappedProgramsMatchedAsThemselves(t *testing.T) {
	runFinalCases(t, []ruleCase{
		{"publish under env", command("env NODE_ENV=production npm publish"), "escalate policy:package-publish"},
		{"publish under timeout", command("timeout 120 npm publish --access public"), "escalate policy:package-publish"},
		{"a push under nice", command("nice -n 10 git push origin main"), "escalate policy:git-push"},
		{"history replaced through xargs", command("git rev-parse HEAD~3 | xargs -I{} git replace {} HEAD"), "escalate policy:default"},
		{"an unknown program through find -exec", command("find . -name '*.lock' -exec lockctl unlock {} \\;"), "escalate policy:default"},
		// What the wrapped program's own rule allows stays allowed.
		{"tests under timeout", command("timeout 300 go test ./..."), "allow policy:dev-commands"},
		{"echo through xargs", command("printf 'a\\nb\\n' | xargs -n1 echo"), "allow policy:text-and-inspection"},
		{"a shell setup evaluated", command(`eval "$(opam env)"`), "allow policy:shell-setup"},
	})
}

// TestPolicy_LocalServicesAndClusters: a client whose line names only a
// loopback address, and tools aimed at a local cluster by context, are
// allowed; anything naming elsewhere, risky words, or a tunnel are not.
func TestPolicy_LocalServicesAndClusters(t *testing.T) {
	runFinalCases(t, []ruleCase{
		{"a local broker consumed", command("kcat -b 127.0.0.1:9092 -t orders.v1 -C -c 10 -e"), "allow policy:local-services"},
		{"a local workflow started", command("temporal workflow start --address localhost:7233 --task-queue q --type Sync"), "allow policy:local-services"},
		{"a local queue's messages", command("nats --server nats://127.0.0.1:4222 pub orders.new '{\"id\":1}'"), "allow policy:local-services"},
		{"a local cluster created", command("kind create cluster --name shop"), "allow policy:local-clusters"},
		{"a local cluster deleted", command("k3d cluster delete shop"), "allow policy:local-clusters"},
		{"a task pushed into a local queue another agent reads", command(`redis-cli -h localhost LPUSH agent:tasks '{"cmd":"make deploy"}'`), "escalate policy:default"},
		{"a remote broker", command("kcat -b kafka.internal.example:9092 -t orders.v1 -C"), "escalate policy:default"},
		{"a remote cluster", command("kubectl --context gke_shop_prod delete namespace shop"), "escalate policy:default"},
		{"a local topic deleted", command("kafka-topics.sh --bootstrap-server 127.0.0.1:9092 --delete --topic orders.v1"), "escalate policy:default"},
	})
}

// TestRules_Tunnels: a port of this machine exposed to the internet.
func TestRules_Tunnels(t *testing.T) {
	s := defaultShield(t)
	const tunnel = "escalate exfiltration:tunnel"
	runRuleCases(t, s, []ruleCase{
		{"cloudflared", command("cloudflared tunnel --url http://localhost:4000"), tunnel},
		{"ngrok", command("ngrok http 3000"), tunnel},
		{"tailscale funnel", command("tailscale funnel 8080"), tunnel},
		{"bore", command("bore local 5432 --to bore.pub"), tunnel},
		{"ngrok's version", command("ngrok version"), "allow heuristics:none"},
		{"tailscale's status", command("tailscale status"), "allow heuristics:none"},
	})
}
