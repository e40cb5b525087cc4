/**
 * The dashboard's Connections page on Postgres (issue #33): connections linked through `/v1`,
 * listed with filters and pages, and one deleted through `/v1`'s code, in a fresh schema of its
 * own. Runs with `npm run test:pg` (TEST_DATABASE_URL).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { invited, ownerWithKeyAs, raw } from "./support/Dashboard.js"
import { onFreshApp } from "./support/DashboardPg.js"
import { testDatabaseUrl } from "./support/PgSchema.js"
import { linkSandbox } from "./support/TestApp.js"

const url = testDatabaseUrl("DashboardConnections.pg.test.ts")

describe("Dashboard connections (Postgres)", () => {
  it.scoped("list with filters and pages, then delete", () =>
    Effect.gen(function*() {
      const { access, dashboard, owner } = yield* ownerWithKeyAs("pg-owner@example.com")
      const viewer = yield* invited(owner, "pg-viewer@example.com", "viewer")
      const a = yield* linkSandbox(access, "provider_a", "CO")
      const b = yield* linkSandbox(access, "provider_b", "HI")

      const all = yield* dashboard.connections.list({ urlParams: {} })
      assert.strictEqual(all.total, 2)
      assert.sameMembers(all.data.map((c) => c.id), [a.connection_id, b.connection_id])
      const hawaii = yield* dashboard.connections.list({ urlParams: { state: "HI", provider: "provider_b" } })
      assert.deepStrictEqual(hawaii.data.map((c) => c.id), [b.connection_id])
      const paged = yield* dashboard.connections.list({ urlParams: { per_page: 1 } })
      assert.strictEqual(paged.data.length, 1)
      assert.isTrue(paged.has_more)

      const refused = yield* raw("DELETE", `/dashboard/api/connections/${a.connection_id}`, {
        cookie: viewer.cookie,
        csrf: viewer.csrf
      })
      assert.strictEqual(refused.status, 403)
      const removed = yield* dashboard.connections.remove({ path: { connection_id: a.connection_id } })
      assert.strictEqual(removed.status, "inactive")
      const inactive = yield* dashboard.connections.list({ urlParams: { status: "inactive" } })
      assert.deepStrictEqual(inactive.data.map((c) => c.id), [a.connection_id])
      const audit = yield* dashboard.team.audit({ urlParams: {} })
      assert.isTrue(audit.data.some((e) => e.action === "connection.deleted" && e.target === a.connection_id))
    }).pipe(onFreshApp(url, "dashboard_connections")))
})
