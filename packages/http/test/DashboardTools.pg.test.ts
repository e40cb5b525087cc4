/**
 * The dashboard's Connect and Sandbox pages' API on Postgres (issue #33): migration
 * `0019_connect_defaults` on Postgres, the defaults used by `POST /v1/link/token/create` and
 * cleared again, and a sandbox connection made, simulated, faulted, cleared and reset through
 * `/v1/sandbox`'s code, in a fresh schema of its own. Runs with `npm run test:pg`
 * (TEST_DATABASE_URL).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, TestClock } from "effect"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import { invited, ownerWithKeyAs, raw } from "./support/Dashboard.js"
import { onFreshApp } from "./support/DashboardPg.js"
import { testDatabaseUrl } from "./support/PgSchema.js"
import { call } from "./support/TestApp.js"

const url = testDatabaseUrl("DashboardTools.pg.test.ts")

/** Tests start on a realistic day (the sandbox dates worlds from the clock). */
const T0 = Date.parse("2026-01-15T12:00:00.000Z")

describe("Dashboard Connect and Sandbox tools (Postgres)", () => {
  it.scoped("Connect defaults in link tokens; a sandbox connection simulated, faulted and reset", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(T0)
      const { access, dashboard, owner } = yield* ownerWithKeyAs("pg-tools@example.com")
      const viewer = yield* invited(owner, "pg-tools-viewer@example.com", "viewer")
      const widgetName = (json: Record<string, unknown>) =>
        Effect.gen(function*() {
          const made = yield* call("POST", "/v1/link/token/create", { token: access, json })
          const opened = yield* call(
            "GET",
            `/connect/session?link_token=${encodeURIComponent(made.body.data.link_token)}`
          )
          return opened.body.data as { client_name: string; logo_url: string | null }
        })

      // Connect defaults, stored on Postgres, used when the call names none
      const saved = yield* dashboard.connect.update({
        payload: { client_name: "PG Leaf", logo_url: "https://pg.example/logo.png" }
      })
      assert.strictEqual(saved.client_name, "PG Leaf")
      assert.strictEqual(saved.updated_at, T0)
      const defaulted = yield* widgetName({})
      assert.strictEqual(defaulted.client_name, "PG Leaf")
      assert.strictEqual(defaulted.logo_url, "https://pg.example/logo.png")
      assert.strictEqual((yield* widgetName({ client_name: "Own" })).client_name, "Own")
      const refused = yield* raw("PUT", "/dashboard/api/connect/settings", {
        cookie: viewer.cookie,
        csrf: viewer.csrf,
        json: { client_name: null, logo_url: null }
      })
      assert.strictEqual(refused.status, 403)
      yield* dashboard.connect.update({ payload: { client_name: null, logo_url: null } })
      const cleared = yield* dashboard.connect.settings()
      assert.isNull(cleared.client_name)
      assert.strictEqual((yield* widgetName({})).client_name, cleared.organisation_name)
      assert.isNull((yield* widgetName({})).logo_url)

      // a sandbox connection through the tools, and /v1's sandbox code on it
      const made = yield* dashboard.sandbox.create({ payload: { provider: "provider_b", state: "HI" } })
      assert.isTrue(made.is_sandbox)
      const path = { connection_id: made.id }
      const simulated = yield* dashboard.sandbox.simulate({ path, payload: { scenario: "transfer_arrived" } })
      assert.strictEqual(simulated.event?.type, "transfer.arrived")
      yield* dashboard.sandbox.simulate({ path, payload: { scenario: "connection_login_required" } })
      const store = yield* ConnectionStore
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(made.id)).status, "error")
      yield* dashboard.sandbox.reset({ path })
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(made.id)).status, "active")
      const set = yield* dashboard.sandbox.setFault({ path, payload: { kind: "expired_login" } })
      assert.deepStrictEqual(set.fault, { kind: "expired_login" })
      assert.deepStrictEqual((yield* dashboard.sandbox.fault({ path })).fault, { kind: "expired_login" })
      const read = yield* call("GET", `/v1/connections/${made.id}/facilities`, { token: access })
      assert.strictEqual(read.status, 409)
      yield* dashboard.sandbox.clearFault({ path })
      assert.strictEqual(Option.getOrThrow(yield* store.getConnection(made.id)).status, "active")
      assert.isNull((yield* dashboard.sandbox.fault({ path })).fault)

      const actions = (yield* dashboard.team.audit({ urlParams: { per_page: 100 } })).data.map((e) => e.action)
      for (
        const action of [
          "connect.settings_updated",
          "sandbox.connection_created",
          "sandbox.simulated",
          "sandbox.reset",
          "sandbox.fault_set",
          "sandbox.fault_cleared"
        ]
      ) {
        assert.include(actions, action)
      }
    }).pipe(onFreshApp(url, "dashboard_tools")))
})
