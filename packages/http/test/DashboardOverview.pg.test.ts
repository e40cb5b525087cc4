/**
 * The dashboard Overview's webhook backlog and sync lag on Postgres (issue #33): the gauges'
 * statements narrowed to one organisation (`MetricsStore.organisationSnapshot`), in a fresh schema
 * of its own (`support/OverviewFigures.ts`, the same steps as on SQLite). Runs with
 * `npm run test:pg` (TEST_DATABASE_URL).
 */
import { describe, it } from "@effect/vitest"
import { onFreshApp } from "./support/DashboardPg.js"
import { backlogAndLag } from "./support/OverviewFigures.js"
import { testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("DashboardOverview.pg.test.ts")

describe("Dashboard overview (Postgres)", () => {
  it.scoped(
    "the webhook backlog and the sync lag: the organisation's own, behind now",
    () => backlogAndLag.pipe(onFreshApp(url, "dashboard_overview")),
    { timeout: 120_000 }
  )
})
