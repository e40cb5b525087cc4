/**
 * The dashboard's main flow on Postgres (issue #33): the first owner's invitation, sign-in with a
 * lockout, TOTP, a team member, an API key created, used, rolled with an overlap and revoked, and
 * the audit log, in a fresh schema of its own. Runs with `npm run test:pg` (TEST_DATABASE_URL).
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap } from "@tracebridge/http"
import { Duration, Effect, Option, Redacted, TestClock } from "effect"
import * as OTPAuth from "otpauth"
import * as Dashboard from "../src/services/Dashboard.js"
import { accept, clientFor, invited, raw, signIn, tokenFor, tokenOf } from "./support/Dashboard.js"
import { freshApp } from "./support/DashboardPg.js"
import { testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("Dashboard.pg.test.ts")

describe("Dashboard (Postgres)", () => {
  it.scoped("invitation, sign-in and lockout, TOTP, team, and an API key's life", () =>
    Effect.gen(function*() {
      const { app, schemaUrl } = yield* freshApp(url, "dashboard")
      yield* Effect.gen(function*() {
        const start = Option.getOrThrow(yield* Bootstrap.firstStart)
        const link = (yield* Bootstrap.firstOwnerLink(start.client_id))!
        const owner = yield* accept(link, "pg-owner@example.com")
        assert.strictEqual(
          (yield* raw("POST", "/dashboard/api/invitations/accept", {
            json: { token: tokenOf(link), email: "again@example.com", password: "a-long-password-1" }
          })).status,
          400
        )
        const api = yield* clientFor(owner)
        assert.strictEqual((yield* api.session.me()).role, "owner")

        // lockout
        for (let i = 0; i < Dashboard.ACCOUNT_FAILURES; i++) {
          const wrong = yield* raw("POST", "/dashboard/api/session", {
            json: { email: owner.email, password: "wrong" }
          })
          assert.strictEqual(wrong.status, 401)
        }
        const locked = yield* raw("POST", "/dashboard/api/session", {
          json: { email: owner.email, password: owner.password }
        })
        assert.strictEqual(locked.status, 429)
        yield* TestClock.adjust(Duration.millis(Dashboard.LOCK_WINDOW_MS))

        // TOTP
        const enrolment = yield* api.totp.enrol()
        const totp = OTPAuth.URI.parse(enrolment.otpauth_uri) as OTPAuth.TOTP
        const now = Dashboard.LOCK_WINDOW_MS
        yield* api.totp.confirm({ payload: { code: totp.generate({ timestamp: now }) } })
        const without = yield* raw("POST", "/dashboard/api/session", {
          json: { email: owner.email, password: owner.password }
        })
        assert.strictEqual(without.status, 401)
        assert.strictEqual(without.body.error.param, "totp_code")
        yield* TestClock.adjust(Duration.seconds(30))
        const again = yield* signIn(owner.email, owner.password, totp.generate({ timestamp: now + 30_000 }))
        assert.notStrictEqual(again.cookie, owner.cookie)

        // team
        const developer = yield* invited(again, "pg-dev@example.com", "developer")
        const devApi = yield* clientFor(developer)
        const members = yield* devApi.team.members()
        assert.deepStrictEqual(members.data.map((m) => [m.email, m.role, m.totp_enabled]).sort(), [
          ["pg-dev@example.com", "developer", false],
          ["pg-owner@example.com", "owner", true]
        ])

        // an API key: created, used, rolled with an overlap, revoked
        const created = yield* devApi.keys.create()
        const used = yield* tokenFor(created.client_id, created.client_secret)
        assert.strictEqual(used.status, 200)
        const rolled = yield* devApi.keys.roll({
          path: { client_id: created.client_id },
          payload: { expires_in_seconds: 30 }
        })
        assert.strictEqual((yield* tokenFor(created.client_id, created.client_secret)).status, 200)
        yield* TestClock.adjust(Duration.seconds(31))
        assert.strictEqual((yield* tokenFor(created.client_id, created.client_secret)).status, 401)
        // (now is LOCK_WINDOW_MS + 30 s + 31 s)
        const fresh = yield* tokenFor(created.client_id, rolled.client_secret)
        assert.strictEqual(fresh.status, 200)
        const listed = (yield* devApi.keys.list()).data.find((k) => k.client_id === created.client_id)!
        assert.strictEqual(listed.created_by, "pg-dev@example.com")
        assert.strictEqual(listed.last_used_at, now + 61_000)
        yield* devApi.keys.revoke({ path: { client_id: created.client_id } })
        assert.strictEqual((yield* raw("GET", "/v1/webhooks/", { token: fresh.body.access_token })).status, 401)

        const audit = yield* devApi.team.audit({ urlParams: { per_page: 3 } })
        assert.deepStrictEqual(audit.data.map((e) => e.action), [
          "api_key.revoked",
          "api_key.rolled",
          "api_key.created"
        ])
        assert.isTrue(audit.has_more)

        // nothing secret stored in plain text
        const dump = yield* Effect.gen(function*() {
          const sql = yield* SqlClient.SqlClient
          return JSON.stringify([
            yield* sql`SELECT * FROM dashboard_users`,
            yield* sql`SELECT * FROM dashboard_sessions`,
            yield* sql`SELECT * FROM dashboard_invitations`,
            yield* sql`SELECT * FROM api_clients`
          ])
        }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(schemaUrl) })), Effect.orDie)
        assert.include(dump, "pg-owner@example.com")
        for (const secret of [owner.password, owner.cookie, again.cookie, enrolment.secret, created.client_secret]) {
          assert.notInclude(dump, secret)
        }
      }).pipe(Effect.provide(app))
    }), { timeout: 120_000 })
})
