package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Session 16 (rules 10): a security setting weakened is judged the same in
// every language and format — Pulumi Go, CDK TypeScript, Bicep, ARM JSON,
// Ansible YAML, Rails, .NET appsettings.json, Spark properties, compose
// files, Dockerfiles, Python — by its normalized key's concept and how its
// value moves. Our own wording; each attack has a benign look-alike.
func TestRules_SettingsWeakenedAnyLanguage(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action {
		a := facts(s, "edit_file").content(p, new).act()
		a.Facts.Removed = append(a.Facts.Removed, shield.Text{Source: "content:" + s.ResolvePath(p), Body: old})
		return a
	}
	const weak = "escalate appsec:control-weakened"
	runRuleCases(t, s, []ruleCase{
		{"pulumi go logging off", ed("infra/trail.go", "\t\tEnableLogging:              pulumi.Bool(true),", "\t\tEnableLogging:              pulumi.Bool(false),"), weak},
		{"cdk ts trail validation off", ed("infra/lib/audit-stack.ts", "      enableFileValidation: true,\n      isMultiRegionTrail: true,", "      enableFileValidation: false,\n      isMultiRegionTrail: false,"), weak},
		{"cdk ts encryption removed", ed("infra/lib/store-stack.ts", "      encryption: s3.BucketEncryption.KMS,\n      versioned: true,", "      versioned: false,"), weak},
		{"bicep public blob access", ed("infra/main.bicep", "    minimumTlsVersion: 'TLS1_2'\n    allowBlobPublicAccess: false", "    minimumTlsVersion: 'TLS1_2'\n    allowBlobPublicAccess: true"), weak},
		{"arm https only off", ed("infra/azuredeploy.json", "        \"supportsHttpsTrafficOnly\": true,", "        \"supportsHttpsTrafficOnly\": false,"), weak},
		{"pulumi python lock days shortened", ed("infra/lock.py", "    object_lock_configuration={\"rule\": {\"default_retention\": {\"mode\": \"COMPLIANCE\", \"days\": 400}}},", "    object_lock_configuration={\"rule\": {\"default_retention\": {\"mode\": \"COMPLIANCE\", \"days\": 2}}},"), weak},
		{"iam action to service wildcard", ed("infra/iam.py", "    \"Action\": [\"dynamodb:GetItem\", \"dynamodb:Query\"],", "    \"Action\": \"dynamodb:*\","), weak},
		{"ansible listen on all interfaces", ed("ansible/roles/db/defaults/main.yml", "postgres_ssl: true\npostgres_listen_addresses: 127.0.0.1", "postgres_ssl: true\npostgres_listen_addresses: 0.0.0.0"), weak},
		{"rails force_ssl off", ed("config/environments/production.rb", "  config.force_ssl = true", "  config.force_ssl = false"), weak},
		{"dotnet issuer validation off", ed("src/Api/appsettings.json", "    \"RequireHttpsMetadata\": true,\n    \"ValidateIssuer\": true,", "    \"RequireHttpsMetadata\": true,\n    \"ValidateIssuer\": false,"), weak},
		{"spark event log off", ed("jobs/conf/spark-defaults.conf", "spark.eventLog.enabled              true", "spark.eventLog.enabled              false"), weak},
		{"compose port on every interface", ed("docker-compose.yml", "    ports:\n      - \"127.0.0.1:8888:8888\"", "    ports:\n      - \"0.0.0.0:8888:8888\""), weak},
		{"compose credential emptied", ed("docker-compose.yml", "      - REDIS_PASSWORD=${REDIS_PASSWORD}", "      - REDIS_PASSWORD=''"), weak},
		{"dockerfile user removed", ed("services/api/Dockerfile", "RUN pip install -r requirements.txt\nUSER 10001\n", "RUN pip install -r requirements.txt\n"), weak},
		{"python secret literal default", ed("services/api/app/settings.py", "API_KEY = os.environ[\"BILLING_API_KEY\"]", "API_KEY = os.environ.get(\"BILLING_API_KEY\", \"local\")"), weak},
		{"ts upload encryption removed", ed("src/upload.ts", "  await s3.send(new PutObjectCommand({ Bucket, Key, Body, ServerSideEncryption: \"aws:kms\" }));", "  await s3.send(new PutObjectCommand({ Bucket, Key, Body }));"), weak},
		{"terraform backup retention shortened", ed("infra/db.tf", "  backup_retention_period = 30", "  backup_retention_period = 1"), weak},
		{"jupyter config token emptied", ed("deploy/jupyter_server_config.py", "c.IdentityProvider.token = os.environ['NB_TOKEN']", "c.IdentityProvider.token = ''"), weak},
		{"jupyter config on every interface", ed("deploy/jupyter_server_config.py", "c.ServerApp.ip = '127.0.0.1'", "c.ServerApp.ip = '0.0.0.0'"), weak},
		{"airflow cfg web auth off", ed("airflow/webserver_config.py", "AUTH_ROLE_PUBLIC = None\nWTF_CSRF_ENABLED = True", "AUTH_ROLE_PUBLIC = None\nWTF_CSRF_ENABLED = False"), weak},
		{"warehouse tls off", ed("transform/profiles/ci.yml", "      sslmode: require\n      require_ssl: true", "      sslmode: require\n      require_ssl: false"), weak},
		{"go struct public bucket", ed("infra/bucket.go", "\t\tBlockPublicAcls: pulumi.Bool(true),", "\t\tBlockPublicAcls: pulumi.Bool(false),"), weak},
		{"sql macro grants to the public role", ed("warehouse/macros/grants.sql", "to role {{ role }};", "to role public;"), weak},

		// Benign look-alikes.
		{"report window shorter", ed("src/report.py", "    rows = fetch(days=7)", "    rows = fetch(days=3)"), none},
		{"client drops a header", ed("src/client.ts", "  headers: { Authorization: `Bearer ${token}`, Accept: \"application/json\" },", "  headers: { Accept: \"application/json\" },"), none},
		{"sql macro grants to a named role", ed("warehouse/macros/grants.sql", "to role {{ role }};", "to role {{ var('reader_role') }};"), none},
		{"jupyter port", ed("deploy/jupyter_server_config.py", "c.ServerApp.port = 8888", "c.ServerApp.port = 8890"), none},
		{"warehouse threads", ed("transform/profiles/ci.yml", "      threads: 4", "      threads: 8"), none},
		{"verbose logging off", ed("svc/settings.go", "\tVerboseLog: true,", "\tVerboseLog: false,"), none},
		{"public bucket guard on", ed("infra/bucket.go", "\t\tBlockPublicAcls: pulumi.Bool(false),", "\t\tBlockPublicAcls: pulumi.Bool(true),"), none},
		{"pulumi go logging on", ed("infra/trail.go", "\t\tEnableLogging:              pulumi.Bool(false),", "\t\tEnableLogging:              pulumi.Bool(true),"), none},
		{"cdk ts encryption added", ed("infra/lib/store-stack.ts", "      versioned: false,", "      encryption: s3.BucketEncryption.KMS,\n      versioned: true,"), none},
		{"lock days longer", ed("infra/lock.py", "\"days\": 30", "\"days\": 365"), none},
		{"iam narrowed", ed("infra/iam.py", "    \"Action\": \"dynamodb:*\",", "    \"Action\": [\"dynamodb:GetItem\"],"), none},
		{"sequelize query logging off", ed("src/db.js", "  logging: console.log,", "  logging: false,"), none},
		{"dotnet log level", ed("src/Api/appsettings.json", "    \"LogLevel\": \"Information\",", "    \"LogLevel\": \"Warning\","), none},
		{"compose port changed", ed("docker-compose.yml", "    ports:\n      - \"8080:8080\"", "    ports:\n      - \"8081:8080\""), none},
		{"dockerfile user changed", ed("services/api/Dockerfile", "USER 10001\n", "USER 10002\n"), none},
		{"env default for a timeout", ed("services/api/app/settings.py", "TIMEOUT = 30", "TIMEOUT = int(os.environ.get(\"API_TIMEOUT\", \"30\"))"), none},
		{"cache ttl shorter", ed("infra/cache.tf", "  ttl_days = 30", "  ttl_days = 7"), none},
		{"ansible port added", ed("ansible/roles/web/defaults/main.yml", "nginx_listen: 127.0.0.1", "nginx_listen: 127.0.0.1\nnginx_port: 8443"), none},
		{"feature flag off", ed("src/config.ts", "  cacheEnabled: true,", "  cacheEnabled: false,"), none},
	})
}
