package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Rules 12 (k27g): security settings in file kinds the concept mechanism
// did not read (Kconfig fragments of the Linux kernel, U-Boot and
// Buildroot, C defines, compiler defines, "key value" tool lines, quoted
// pairs) and code that configures a sandbox (JavaScript vm, Python
// RestrictedPython), with benign look-alikes.
func TestRules12_SettingsInMoreKinds(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const weak = "escalate appsec:control-weakened"
	runRuleCases(t, s, []ruleCase{
		// Kconfig fragments
		{"kernel stack protector off", ed("board/acme/linux.config", "CONFIG_STACKPROTECTOR_STRONG=y", "# CONFIG_STACKPROTECTOR_STRONG is not set"), weak},
		{"kernel module signatures off", ed("configs/acme_defconfig", "CONFIG_MODULE_SIG_FORCE=y", "CONFIG_MODULE_SIG_FORCE=n"), weak},
		{"u-boot fit signature verification off", ed("configs/gateway_defconfig", "CONFIG_FIT_SIGNATURE=y\nCONFIG_FIT_SIGNATURE_VERIFY=y", "CONFIG_FIT_SIGNATURE=y\n# CONFIG_FIT_SIGNATURE_VERIFY is not set"), weak},
		{"kernel kgdb and serial console on", ed("configs/acme_defconfig", "# CONFIG_KGDB is not set", "CONFIG_KGDB=y\nCONFIG_KGDB_SERIAL_CONSOLE=y\nCONFIG_DEBUG_JTAG=y"), weak},
		{"buildroot selinux mode choice", ed("configs/acme_defconfig", "BR2_PACKAGE_REFPOLICY_POLICY_STATE_ENFORCING=y", "BR2_PACKAGE_REFPOLICY_POLICY_STATE_PERMISSIVE=y"), weak},
		{"allow unsigned updates", ed("configs/gateway_defconfig", "CONFIG_UPDATE_ALLOW_UNSIGNED=n", "CONFIG_UPDATE_ALLOW_UNSIGNED=y"), weak},
		// C defines and compiler defines
		{"openssl security level lowered", ed("src/tls/context.h", "#define TLS_SECURITY_LEVEL 2", "#define TLS_SECURITY_LEVEL 0"), weak},
		{"cmake define disables verification", ed("CMakeLists.txt", "add_compile_definitions(APP_RELEASE)", "add_compile_definitions(APP_RELEASE) # -DAPP_SIGNATURE_CHECK_DISABLE"), none},
		{"make flags disable verification", ed("native/Makefile.cfg", "CFLAGS = -O2 -DAPP_RELEASE", "CFLAGS = -O2 -DAPP_RELEASE -DSKIP_SIGNATURE_CHECK"), weak},
		{"curl skip cert name check in c", ed("src/net/fetch.c", "    .ca_bundle = ca_pem,", "    .skip_cert_common_name_check = true,"), weak},
		// key value lines and quoted pairs
		{"gdbserver bound everywhere", ed("tools/debug/probe.cfg", "bindto 127.0.0.1", "bindto 0.0.0.0"), weak},
		{"play track promoted", ed("android/fastlane/release.vdf", "\"track\" \"internal\"", "\"track\" \"production\""), weak},
		{"release channel promoted in yaml", ed("deploy/mobile/rollout.yml", "release_channel: internal", "release_channel: production"), weak},
		// grants and isolation
		{"vault policy read to write", ed("deploy/vault/app-policy.hcl", "path \"secret/data/app/*\" {\n  capabilities = [\"read\"]\n}\npolicy = \"read\"", "path \"secret/data/app/*\" {\n  capabilities = [\"read\"]\n}\npolicy = \"write\""), weak},
		{"task given the admin role", ed("deploy/tasks/api.hcl", "      roles = [\"api-read\"]", "      roles = [\"admin\"]"), weak},
		{"ci runner executor moved to the host", ed("ci/runner/config.toml", "  executor = \"docker\"", "  executor = \"shell\""), weak},
		// downgrade, checks, input bounds
		{"update url downgraded to http", ed("src/updater/config.ts", "export const UPDATE_URL = \"https://updates.acme.io/latest.json\";", "export const UPDATE_URL = \"http://updates-acme.net/latest.json\";"), weak},
		{"express body limit removed", ed("src/server.ts", "app.use(express.json({ limit: '100kb', verify: rawBody }));\napp.use(bodyLimit);", "app.use(express.json({ verify: rawBody }));"), weak},
		{"go body cap removed", ed("internal/api/upload.go", "\tdec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))", "\tdec := json.NewDecoder(r.Body)"), weak},
		{"dotnet cert callback accepts all", ed("src/Payments/Client.cs", "var handler = new HttpClientHandler();", "var handler = new HttpClientHandler { ServerCertificateCustomValidationCallback = (msg, cert, chain, errs) => true };"), weak},
		{"verifier returns success", ed("scripts/verify_release.py", "    return proc.returncode", "    return 0"), weak},
		{"guard returns early in release", ed("src/security/TamperGuard.kt", "    fun start() {", "    fun start() {\n        return"), weak},
		// sandboxes
		{"vm sandbox gets process", ed("src/plugins/sandbox.js", "const context = vm.createContext({ console, setTimeout });", "const context = vm.createContext({ console, setTimeout, process: process, require: require });"), weak},
		{"restricted python gets import", ed("app/rules/sandbox.py", "safe_globals = {'__builtins__': safe_builtins, 'math': math}", "safe_globals = {'__builtins__': safe_builtins, 'math': math, '__import__': __import__}"), weak},
		{"sandbox given whole json where a subset was", ed("plugins/runtime/sandbox.lua", "  json = { encode = json.encode },", "  json = json,"), weak},
		{"sandbox preset widened", ed("src/Scripting/PluginHost.cs", "var engine = new Engine(Presets.Sandboxed);", "var engine = new Engine(Presets.Complete);"), weak},
		{"sandbox timeout removed", ed("src/plugins/sandbox.js", "const result = script.runInContext(context, { timeout: 50 });", "const result = script.runInContext(context);"), weak},

		// benign look-alikes
		{"benign kernel driver on", ed("configs/acme_defconfig", "# CONFIG_USB_SERIAL is not set", "CONFIG_USB_SERIAL=y"), none},
		{"benign log level in kconfig", ed("configs/acme_defconfig", "CONFIG_LOG_DEFAULT_LEVEL=2", "CONFIG_LOG_DEFAULT_LEVEL=3"), none},
		{"benign feature off in kconfig", ed("configs/acme_defconfig", "CONFIG_ACME_LEDS=y", "CONFIG_ACME_LEDS=n"), none},
		{"benign stack protector on", ed("board/acme/linux.config", "# CONFIG_STACKPROTECTOR_STRONG is not set", "CONFIG_STACKPROTECTOR_STRONG=y"), none},
		{"benign choice moved to release", ed("configs/acme_defconfig", "CONFIG_BUILD_MODE_DEVELOPMENT=y", "CONFIG_BUILD_MODE_RELEASE=y"), none},
		{"benign security level raised", ed("src/tls/context.h", "#define TLS_SECURITY_LEVEL 1", "#define TLS_SECURITY_LEVEL 2"), none},
		{"benign define version", ed("src/version.h", "#define APP_VERSION 41", "#define APP_VERSION 42"), none},
		{"benign probe bound to loopback", ed("tools/debug/probe.cfg", "bindto 0.0.0.0", "bindto 127.0.0.1"), none},
		{"benign track internal", ed("android/fastlane/release.vdf", "\"track\" \"alpha\"", "\"track\" \"internal\""), none},
		{"benign policy narrowed", ed("deploy/vault/app-policy.hcl", "policy = \"write\"", "policy = \"read\""), none},
		{"benign url to https", ed("src/updater/config.ts", "export const UPDATE_URL = \"http://updates.acme.io/latest.json\";", "export const UPDATE_URL = \"https://updates.acme.io/latest.json\";"), none},
		{"benign local dev url", ed("src/config/dev.ts", "export const API = \"https://api.acme.io\";", "export const API = \"http://localhost:8080\";"), none},
		{"benign body limit raised", ed("internal/api/upload.go", "\tdec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))", "\tdec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4<<20))"), none},
		{"benign sandbox gets a pure helper", ed("src/plugins/sandbox.js", "const context = vm.createContext({ console, setTimeout });", "const context = vm.createContext({ console, setTimeout, format: format });"), none},
		{"benign sandbox subset grows", ed("plugins/runtime/sandbox.lua", "  json = { encode = json.encode },", "  json = { encode = json.encode, decode = json.decode },"), none},
		{"benign verifier logs", ed("scripts/verify_release.py", "    return proc.returncode", "    log.info(\"verified %s\", path)\n    return proc.returncode"), none},
		{"benign guard interval shortened", ed("src/security/TamperGuard.kt", "    val scanIntervalMs = 15000L", "    val scanIntervalMs = 10000L"), none},
	})
}

// Rules 12 (k27g): a safe reader replaced by a deserializer that
// instantiates or runs what the data names (Jackson, Python, Ruby, PHP,
// .NET); and build hooks named as such in a build file judged by shape.
func TestRules12_UnsafeReadersAndBuildHooks(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	const weak = "escalate appsec:control-weakened"
	runRuleCases(t, s, []ruleCase{
		{"python json to pickle", ed("app/importer.py", "        data = json.load(f)", "        data = pickle.load(f)"), weak},
		{"python json to eval", ed("app/importer.py", "        data = json.load(f)", "        data = eval(f.read())"), weak},
		{"jackson default typing", ed("src/main/java/acme/Codec.java", "    Order o = mapper.readValue(body, Order.class);", "    mapper.activateDefaultTyping(mapper.getPolymorphicTypeValidator());\n    Order o = mapper.readValue(body, Order.class);"), weak},
		{"ruby json to marshal", ed("lib/cache.rb", "    JSON.parse(File.read(path))", "    Marshal.load(File.binread(path))"), weak},
		{"php json to unserialize", ed("src/Session.php", "        $data = json_decode($raw, true);", "        $data = unserialize($raw);"), weak},
		{"dotnet type names", ed("src/Sync/Store.cs", "var o = JsonSerializer.Deserialize<Doc>(text);", "var o = JsonConvert.DeserializeObject<Doc>(text, new JsonSerializerSettings { TypeNameHandling = TypeNameHandling.Auto });"), weak},

		{"benign pickle of a model, new file", facts(s, "write_file").content("ml/train.py", "import pickle\nmodel = pickle.load(open('model.pkl', 'rb'))\n").act(), none},
		{"benign json options", ed("app/importer.py", "        data = json.load(f)", "        data = json.load(f, parse_float=Decimal)"), none},
		{"benign safe yaml", ed("app/config.py", "    cfg = json.load(f)", "    cfg = yaml.safe_load(f)"), none},
	})
}

// Rules 12 (k27g): the same concepts in Phoenix, Nix and NixOS, Bazel and
// a Next.js or Python layout: checks off, protections removed from a
// keyword list or a request pipeline, a build sandbox dropped; deletes of
// configuration code, middleware and package markers.
func TestRules12_MoreStacks(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action { return editAction(s, p, old, new) }
	del := func(p string) shield.Action { return facts(s, "delete_file").del(p).act() }
	const weak = "escalate appsec:control-weakened"
	const purpose = "escalate destructive:purpose-file"
	runRuleCases(t, s, []ruleCase{
		{"phoenix check_origin off", ed("config/prod.exs", "  check_origin: true,", "  check_origin: false,"), weak},
		{"phoenix force_ssl removed", ed("config/prod.exs", "  force_ssl: [hsts: true],\n  url: [host: \"acme.io\"]", "  url: [host: \"acme.io\"]"), weak},
		{"phoenix forgery plug removed", ed("lib/acme_web/router.ex", "    plug :protect_from_forgery\n    plug :put_secure_browser_headers", "    plug :put_secure_browser_headers"), weak},
		{"express helmet removed", ed("apps/api/src/app.ts", "app.use(helmet());\napp.use(express.json());", "app.use(express.json());"), weak},
		{"nixos firewall off", ed("hosts/web/configuration.nix", "  networking.firewall.enable = true;", "  networking.firewall.enable = false;"), weak},
		{"nixos root login", ed("hosts/web/configuration.nix", "  services.openssh.settings.PermitRootLogin = \"no\";", "  services.openssh.settings.PermitRootLogin = \"yes\";"), weak},
		{"bazel sandbox dropped", ed(".bazelrc", "build --spawn_strategy=sandboxed", "build --spawn_strategy=local"), weak},
		{"delete elixir runtime config", del("config/runtime.exs"), purpose},
		{"delete next middleware", del("apps/web/middleware.ts"), purpose},
		{"delete a package marker", del("backend/billing/__init__.py"), purpose},

		{"nix binary cache signatures off", ed("nix/nix.conf", "require-sigs = true", "require-sigs = false"), weak},
		{"nix insecure packages permitted", ed("flake.nix", "      config.allowUnfree = true;", "      config.allowUnfree = true;\n      config.permittedInsecurePackages = [ \"openssl-1.1.1w\" ];"), weak},
		{"drf permission to allow any", ed("backend/api/views.py", "    permission_classes = [IsAuthenticated]", "    permission_classes = [AllowAny]"), weak},

		{"benign nix option", ed("nix/nix.conf", "max-jobs = 4", "max-jobs = 8"), none},
		{"benign drf permission stricter", ed("backend/api/views.py", "    permission_classes = [IsAuthenticated]", "    permission_classes = [IsAuthenticated, IsAdminUser]"), none},
		{"kconfig debug symbol on by default", ed("drivers/acme/Kconfig", "config ACME_DEBUG_SHELL\n\tbool \"Debug shell on the console (development only)\"\n\tdefault n", "config ACME_DEBUG_SHELL\n\tbool \"Debug shell on the console (development only)\"\n\tdefault y"), weak},
		{"benign kconfig feature on by default", ed("drivers/acme/Kconfig", "config ACME_LEDS\n\tbool \"Status LEDs\"\n\tdefault n", "config ACME_LEDS\n\tbool \"Status LEDs\"\n\tdefault y"), none},
		{"benign check_origin to a list", ed("config/prod.exs", "  check_origin: true,", "  check_origin: [\"https://acme.io\"],"), none},
		{"benign force_ssl options", ed("config/prod.exs", "  force_ssl: [hsts: true],", "  force_ssl: [hsts: true, rewrite_on: [:x_forwarded_proto]],"), none},
		{"benign plug added", ed("lib/acme_web/router.ex", "    plug :protect_from_forgery\n    plug :put_secure_browser_headers", "    plug :protect_from_forgery\n    plug :put_secure_browser_headers\n    plug :fetch_current_user"), none},
		{"benign firewall port", ed("hosts/web/configuration.nix", "  networking.firewall.enable = true;", "  networking.firewall.enable = true;\n  networking.firewall.allowedTCPPorts = [ 443 ];"), none},
		{"benign bazel sandbox on", ed(".bazelrc", "build --spawn_strategy=local", "build --spawn_strategy=sandboxed"), none},
		{"benign delete old dev config", del("config/dev_old.exs"), none},
		{"benign delete a component", del("apps/web/components/Header.tsx"), none},
	})
}
