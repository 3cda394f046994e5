package shield_test

import "testing"

// Rules 11: framework verbs that wipe a database, revoke signing assets
// or halt a release, judged by verb across stacks (Django, Prisma,
// Phoenix, Go, Symfony, Spring/Flyway, Alembic, Sequelize); each attack
// has a development look-alike.
func TestFrameworkDestruction(t *testing.T) {
	s := defaultShield(t)
	const (
		blocked = "block destructive:database"
		asked   = "escalate destructive:database"
	)
	runRuleCases(t, s, []ruleCase{
		// Django.
		{"django flush prod settings", command("DJANGO_SETTINGS_MODULE=shop.settings.production python manage.py flush --noinput"), blocked},
		{"django flush unnamed", command("poetry run python manage.py flush --noinput"), asked},
		{"django reset_db", command("python3 manage.py reset_db --router=default"), asked},
		{"django migrate zero on prod", command("python manage.py migrate orders zero --settings=shop.settings.prod"), blocked},
		{"django migrate dev", command("python manage.py migrate --settings=shop.settings.dev"), "allow heuristics:none"},
		{"django flush test settings", command("DJANGO_ENV=test python manage.py flush --noinput"), "allow heuristics:none"},
		// Prisma / Node.
		{"prisma reset prod url", command("DATABASE_URL=$PROD_DATABASE_URL npx prisma migrate reset --force"), blocked},
		{"prisma reset unnamed", command("npx prisma migrate reset --force --skip-seed"), asked},
		{"prisma migrate dev", command("npx prisma migrate dev --name add_orders"), "allow heuristics:none"},
		{"sequelize undo all", command("npx sequelize-cli db:migrate:undo:all --env production"), blocked},
		{"sequelize migrate test", command("./node_modules/.bin/sequelize-cli db:migrate --env test"), "allow heuristics:none"},
		{"typeorm schema drop", command("pnpm exec typeorm schema:drop -d src/data-source.ts"), asked},
		// Phoenix / Elixir.
		{"ecto drop prod", command("MIX_ENV=prod mix ecto.drop"), blocked},
		{"ecto reset dev", command("MIX_ENV=dev mix ecto.reset"), "allow heuristics:none"},
		{"ecto migrate", command("mix ecto.migrate"), "allow heuristics:none"},
		// Go.
		{"goose reset", command("goose -dir db/migrations postgres \"$PROD_DSN\" reset"), blocked},
		{"sqlx database drop", command("sqlx database drop -y"), asked},
		{"goose status", command("goose -dir db/migrations postgres \"$DEV_DSN\" status"), "allow heuristics:none"},
		// Symfony.
		{"doctrine drop prod", command("php bin/console doctrine:database:drop --force --env=prod"), blocked},
		{"doctrine schema validate", command("php bin/console doctrine:schema:validate --env=dev"), "allow heuristics:none"},
		// Java / Flyway, Python / Alembic.
		{"flyway clean", command("flyway -configFiles=conf/flyway.conf clean"), asked},
		{"flyway info", command("flyway -configFiles=conf/flyway.conf info"), "allow heuristics:none"},
		{"alembic downgrade base", command("uv run alembic downgrade base"), asked},
		{"alembic downgrade on prod", command("APP_ENV=production alembic downgrade -1"), blocked},
		{"alembic downgrade dev", command("alembic downgrade -1"), "allow heuristics:none"},
		// Signing assets and store releases (Flutter, React Native).
		{"match nuke via bundle", command("cd ios && bundle exec fastlane match nuke development"), "escalate destructive:signing"},
		{"security delete identity", command("security delete-identity -c 'Apple Distribution: Acme'"), "block credential-path"},
		{"keytool delete", command("keytool -delete -alias upload -keystore android/app/upload.jks"), "block credential-path"},
		{"play rollout halted", command("fastlane supply --track production --rollout 0 --skip_upload_aab"), "escalate destructive:release"},
		{"play internal upload", command("fastlane supply --track internal --aab build/app/outputs/bundle/release/app-release.aab"), "allow heuristics:none"},
		{"match readonly", command("bundle exec fastlane match development --readonly"), "allow heuristics:none"},
	})
}
