package shield_test

import "testing"

// Rules 11: credentials by shape, not by list. Files named by their
// purpose (vault password files, keystore password files, PKCS#8 keys,
// user-level package credentials) and verbs that print decrypted secrets
// or the configuration holding them, across stacks (Symfony, Django,
// Flutter, Node, Go/sops, Elixir, Heroku); each with a look-alike.
func TestCredentialsByShape(t *testing.T) {
	s := defaultShield(t)
	const printed = "block credential-print"
	const path = "block credential-path"
	const none = "allow heuristics:none"
	runRuleCases(t, s, []ruleCase{
		// Files named by purpose.
		{"flutter key.properties", command("cat android/key.properties"), path},
		{"flutter key.properties example", command("cat android/key.properties.example"), none},
		{"salt vault password file", command("head -1 infra/salt/.vault_password"), path},
		{"vault pass file in a role", command("less ops/vault-pass.txt"), path},
		{"pkcs8 key for a push service", command("cat certs/push/AuthKey_8QK3Z7.p8"), path},
		{"user-level nuget config (linux)", command("cat ~/.config/NuGet/NuGet.Config"), path},
		{"workspace nuget config", command("cat nuget.config"), none},
		{"bundler user config", command("cat ~/.bundle/config"), path},
		{"workspace bundler config", command("cat .bundle/config"), none},
		{"composer user auth", command("cat ~/.config/composer/auth.json"), path},
		// Verbs that print secrets.
		{"symfony secrets reveal", command("php bin/console secrets:reveal DATABASE_PASSWORD --env=prod"), printed},
		{"symfony secrets list", command("php bin/console secrets:list"), none},
		{"django diffsettings", command("poetry run python manage.py diffsettings --all"), printed},
		{"django check", command("poetry run python manage.py check --deploy"), none},
		{"django shell reading settings", command("python manage.py shell -c 'from django.conf import settings; print(settings.SECRET_KEY)'"), printed},
		{"django shell counting", command("python manage.py shell -c 'from shop.models import Order; print(Order.objects.count())'"), none},
		{"sops decrypt", command("sops -d secrets/prod.enc.yaml"), printed},
		{"sops encrypt", command("sops -e -i secrets/dev.yaml"), none},
		{"heroku config", command("heroku config -a acme-api"), printed},
		{"heroku ps", command("heroku ps -a acme-api"), none},
		{"doppler secrets", command("doppler secrets --project api --config prd"), printed},
		// Rules 14: the names alone.
		{"doppler secret names", command("doppler secrets --only-names -c dev"), none},
		{"doppler secret get, names flag", command("doppler secrets get STRIPE_KEY --only-names --plain"), printed},
		{"doppler secrets download", command("doppler secrets download --only-names --no-file"), printed},
		{"vault kv get", command("vault kv get secret/payments"), printed},
		{"npm token read back", command("npm config get //registry.npmjs.org/:_authToken"), path},
		{"npm registry read back", command("npm config get registry"), none},
		{"composer http-basic", command("composer config --global http-basic.repo.acme.io"), printed},
		{"bundle config get host", command("bundle config get gems.acme.io"), printed},
		{"bundle config get path", command("bundle config get path"), none},
		{"ansible vault view", command("ansible-vault view group_vars/prod/vault.yml"), printed},
		{"ansible vault encrypt", command("ansible-vault encrypt_string --stdin-name db_password"), none},
		{"match decrypt (flutter)", command("cd ios && bundle exec fastlane match decrypt --git_url git@example.com:certs.git"), printed},
		{"dotnet user-secrets list", command("dotnet user-secrets list --project src/Api"), printed},
		// An environment dump filtered for a credentialed service's variables.
		{"env filtered for stripe", command("env | grep -i -E 'stripe|sk_'"), "escalate credential-env"},
		{"printenv filtered for openai", command("printenv | grep OPENAI"), "escalate credential-env"},
		{"env filtered for java home", command("env | grep -i java_home"), none},
		{"env filtered for proxies", command("env | grep -i proxy"), none},
		{"dotnet user-secrets set", command("dotnet user-secrets set Feature:Flag true --project src/Api"), none},
	})
}
