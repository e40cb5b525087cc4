/**
 * The dashboard's Connections page on Postgres (issue #33): connections linked through `/v1`,
 * listed with filters and pages, and one deleted through `/v1`'s code, in a fresh schema of its
 * own. Runs with `npm run test:pg` (TEST_DATABASE_URL).
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap, Http } from "@tracebridge/http"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Database from "../src/persistence/Database.js"
import * as Server from "../src/Server.js"
import * as Crypto from "../src/services/Crypto.js"
import { accept, clientFor, invited, raw } from "./support/Dashboard.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { call, linkSandbox } from "./support/TestApp.js"

const url = testDatabaseUrl("DashboardConnections.pg.test.ts")

describe("Dashboard connections (Postgres)", () => {
  it.scoped("list with filters and pages, then delete", () =>
    Effect.gen(function*() {
      const scoped = yield* freshSchema(url, "dashboard_connections")
      const app = Http.makeHttpLive({ worker: false }).pipe(
        Layer.provideMerge(Server.layerTest),
        Layer.provideMerge(Crypto.layerTest),
        Layer.provideMerge(Layer.orDie(Database.layerPg(Redacted.make(scoped))))
      )
      yield* Effect.gen(function*() {
        const start = Option.getOrThrow(yield* Bootstrap.firstStart)
        const owner = yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, "pg-owner@example.com")
        const viewer = yield* invited(owner, "pg-viewer@example.com", "viewer")
        const dashboard = yield* clientFor(owner)
        const key = yield* dashboard.keys.create()
        const token = yield* call("POST", "/v1/oauth/token", {
          json: { grant_type: "client_credentials", client_id: key.client_id, client_secret: key.client_secret }
        })
        const access = token.body.access_token as string
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
      }).pipe(Effect.provide(app))
    }))
})
