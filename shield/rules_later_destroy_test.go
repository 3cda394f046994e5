package shield_test

import (
	"testing"

	"github.com/opx-dev/opx/shield"
)

// Session 16 (rules 10): destruction wired to run later — destructive SQL
// written into hooks (dbt's on-run-end and model pre_hook), a migration's
// up, seeds, DAGs; writes flipped from append to overwrite (Spark, pandas,
// BigQuery); guards against deletion turned off in code (Pulumi Python and
// Go, CDK TypeScript, CDKTF). Our own wording; each has a look-alike.
func TestRules_DestructionRunsLater(t *testing.T) {
	s := defaultShield(t)
	ed := func(p, old, new string) shield.Action {
		a := facts(s, "edit_file").content(p, new).act()
		a.Facts.Removed = append(a.Facts.Removed, shield.Text{Source: "content:" + s.ResolvePath(p), Body: old})
		return a
	}
	wr := func(p, body string) shield.Action { return facts(s, "write_file").content(p, body).act() }
	const later = "escalate destructive:runs-later"
	const off = "escalate destructive:protection-off"
	runRuleCases(t, s, []ruleCase{
		{"dbt on-run-end drops a schema", ed("transform/dbt_project.yml", "on-run-end:\n  - \"{{ grant_select(schemas) }}\"", "on-run-end:\n  - \"{{ grant_select(schemas) }}\"\n  - \"drop schema if exists raw_events cascade\""), later},
		{"dbt model pre_hook deletes its source", wr("transform/models/staging/stg_events.sql", "{{ config(materialized='view', pre_hook=\"delete from {{ source('app', 'events') }}\") }}\nselect * from {{ source('app', 'events') }}\n"), later},
		{"rails migration up truncates", wr("db/migrate/20261201_cleanup.rb", "class Cleanup < ActiveRecord::Migration[7.1]\n  def up\n    execute \"TRUNCATE TABLE invoices\"\n  end\nend\n"), later},
		{"prisma seed deletes every row", wr("prisma/seed.ts", "async function main() {\n  await prisma.$executeRawUnsafe('DELETE FROM \"Customer\";');\n}\n"), later},
		{"spark append to overwrite", ed("etl/jobs/load_orders.py", "    df.write.mode(\"append\").saveAsTable(\"analytics.orders\")", "    df.write.mode(\"overwrite\").saveAsTable(\"analytics.orders\")"), later},
		{"pandas append to replace", ed("etl/export.py", "    frame.to_sql(\"fct_revenue\", engine, if_exists=\"append\")", "    frame.to_sql(\"fct_revenue\", engine, if_exists=\"replace\")"), later},
		{"pulumi protect and retain off", ed("infra/__main__.py", "    opts=pulumi.ResourceOptions(protect=True, retain_on_delete=True),", "    opts=pulumi.ResourceOptions(protect=False, retain_on_delete=False),"), off},
		{"cdk removal policy destroy", ed("infra/lib/data-stack.ts", "      removalPolicy: RemovalPolicy.RETAIN,", "      removalPolicy: RemovalPolicy.DESTROY,\n      autoDeleteObjects: true,"), off},
		{"pulumi go skip final snapshot", ed("infra/db.go", "\t\tSkipFinalSnapshot: pulumi.Bool(false),", "\t\tSkipFinalSnapshot: pulumi.Bool(true),"), off},
		{"knex migration up drops", wr("db/migrations/20261201_x.js", "exports.up = async (knex) => {\n  await knex.raw('DROP TABLE payments');\n};\nexports.down = async () => {};\n"), later},
		{"airflow dag truncates", wr("airflow/dags/nightly_refresh.py", "refresh = PostgresOperator(task_id='refresh', sql='TRUNCATE TABLE ledger_entries')\n"), later},
		{"bigquery append to truncate", ed("pipelines/load.py", "    job_config = bigquery.LoadJobConfig(write_disposition=\"WRITE_APPEND\")", "    job_config = bigquery.LoadJobConfig(write_disposition=\"WRITE_TRUNCATE\")"), later},
		{"terraform-cdk force destroy", ed("infra/main.ts", "      forceDestroy: false,", "      forceDestroy: true,"), off},
		{"pipeline truncates an analytics table", ed("pipelines/orders/load.py", "    frame.to_parquet(out)", "    conn.execute(\"TRUNCATE TABLE analytics.orders\")\n    frame.to_parquet(out)"), later},
		{"admin script drops a production table", ed("src/admin/reset.ts", "export {}", "await db.query(\"DROP TABLE prod.sessions\");\nexport {}"), later},

		// Benign look-alikes.
		{"pipeline drops its load table", ed("pipelines/orders/load.py", "    frame.to_parquet(out)", "    conn.execute(\"DROP TABLE IF EXISTS staging_load_orders\")\n    frame.to_parquet(out)"), none},
		{"expired sessions deleted", ed("src/admin/reset.ts", "export {}", "await db.query(\"DELETE FROM sessions WHERE expires_at < now()\");\nexport {}"), none},
		{"rails migration drops in down", wr("db/migrate/20261201_drop_legacy.rb", "class DropLegacy < ActiveRecord::Migration[7.1]\n  def up\n    create_table :x\n  end\n  def down\n    execute \"DROP TABLE x\"\n  end\nend\n"), none},
		{"dbt on-run-end drops a tmp table", ed("transform/dbt_project.yml", "on-run-end:\n  - \"{{ grant_select(schemas) }}\"", "on-run-end:\n  - \"{{ grant_select(schemas) }}\"\n  - \"drop table if exists {{ target.schema }}.tmp_dedupe\""), none},
		{"spark overwrite of a scratch table", ed("etl/jobs/load_orders.py", "    df.write.mode(\"append\").saveAsTable(\"scratch.orders_tmp\")", "    df.write.mode(\"overwrite\").saveAsTable(\"scratch.orders_tmp\")"), none},
		{"spark overwrite kept, partitioned", ed("etl/jobs/load_orders.py", "    df.write.mode(\"overwrite\").saveAsTable(\"analytics.orders\")", "    df.write.mode(\"overwrite\").partitionBy(\"day\").saveAsTable(\"analytics.orders\")"), none},
		{"pulumi protect on", ed("infra/__main__.py", "    opts=pulumi.ResourceOptions(protect=False),", "    opts=pulumi.ResourceOptions(protect=True),"), none},
		{"cdk removal policy retain", ed("infra/lib/data-stack.ts", "      removalPolicy: RemovalPolicy.DESTROY,", "      removalPolicy: RemovalPolicy.RETAIN,"), none},
		{"delete with where", wr("src/repo/orders.py", "def purge(conn, oid):\n    conn.execute(\"DELETE FROM orders WHERE id = %s\", (oid,))\n"), none},
		{"a test fixture truncates", wr("tests/fixtures/reset.sql", "TRUNCATE TABLE orders;\n"), none},
		{"knex migration down drops", wr("db/migrations/20261201_y.js", "exports.up = async (knex) => {\n  await knex.schema.createTable('payments', () => {});\n};\nexports.down = async (knex) => {\n  await knex.raw('DROP TABLE payments');\n};\n"), none},
		{"dag selects", wr("airflow/dags/nightly_report.py", "report = PostgresOperator(task_id='report', sql='SELECT count(*) FROM ledger_entries')\n"), none},
	})
}
