/**
 * The dashboard Overview's webhook backlog and sync lag on Postgres (issue #33): the gauges'
 * statements narrowed to one organisation (`MetricsStore.organisationSnapshot`), in a fresh schema
 * of its own (`support/OverviewFigures.ts`, the same steps as on SQLite). Runs with
 * `npm run test:pg` (TEST_DATABASE_URL).
 */
import { describe, it } from "@effect/vitest"
import { Http } from "@tracebridge/http"
import { Effect, Layer, Redacted } from "effect"
import * as Database from "../src/persistence/Database.js"
import * as Server from "../src/Server.js"
import * as Crypto from "../src/services/Crypto.js"
import { backlogAndLag } from "./support/OverviewFigures.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("DashboardOverview.pg.test.ts")

describe("Dashboard overview (Postgres)", () => {
  it.scoped(
    "the webhook backlog and the sync lag: the organisation's own, behind now",
    () =>
      Effect.gen(function*() {
        const scoped = yield* freshSchema(url, "dashboard_overview")
        const app = Http.makeHttpLive({ worker: false }).pipe(
          Layer.provideMerge(Server.layerTest),
          Layer.provideMerge(Crypto.layerTest),
          Layer.provideMerge(Layer.orDie(Database.layerPg(Redacted.make(scoped))))
        )
        yield* backlogAndLag.pipe(Effect.provide(app))
      }),
    { timeout: 120_000 }
  )
})
