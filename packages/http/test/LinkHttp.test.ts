/**
 * The link handlers' sandbox shortcut: `POST /v1/sandbox/public_token/create` links a new sandbox
 * connection, or, with `connection_id`, re-enters the login of an existing one (update mode without
 * the widget, as Plaid's `reset_login`; issue #30).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, otherOrganisation, signIn, TestApp } from "./support/TestApp.js"

const CREATE = "/v1/sandbox/public_token/create"

describe("LinkHttp", () => {
  it.effect("update mode: connection_id relinks a connection in error, without the widget", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const cases = [["provider_a", "CO"], ["provider_b", "HI"]] as const
      for (const [n, [provider, state]] of cases.entries()) {
        const conn = yield* linkSandbox(me.access, provider)
        const statusOf = Effect.map(
          call("GET", `/v1/connections/${conn.connection_id}`, { token: me.access }),
          (r) => r.body.data.status as string
        )
        yield* call("POST", `/v1/sandbox/${conn.connection_id}/simulate`, {
          token: me.access,
          json: { scenario: "connection_login_required" }
        })
        assert.strictEqual(yield* statusOf, "error")

        const created = yield* call("POST", CREATE, { token: me.access, json: { connection_id: conn.connection_id } })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        assert.match(created.body.data.public_token, /^public-sandbox-/)
        assert.strictEqual(created.body.meta.provider, provider)
        assert.strictEqual(created.body.meta.state, state)
        const exchanged = yield* call("POST", "/v1/link/token/exchange", {
          token: me.access,
          json: { public_token: created.body.data.public_token }
        })
        assert.strictEqual(exchanged.status, 200, JSON.stringify(exchanged.body))
        assert.strictEqual(exchanged.body.data.connection_id, conn.connection_id, "the same connection, not a new one")
        assert.isUndefined(exchanged.body.data.connection_token, "the connection token was given once, at the link")
        assert.strictEqual(yield* statusOf, "active")
        const listed = yield* call("GET", "/v1/connections", { token: me.access })
        assert.strictEqual(listed.body.pagination.total, n + 1, "no second connection was made")
        const facilities = yield* call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access })
        assert.strictEqual(facilities.status, 200, JSON.stringify(facilities.body))
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("update mode refuses what it cannot relink, and changes nothing", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const expect = (
        answer: { status: number; body: any },
        status: number,
        code: string,
        param?: string
      ) => {
        assert.strictEqual(answer.status, status, JSON.stringify(answer.body))
        assert.strictEqual(answer.body.error.code, code, JSON.stringify(answer.body))
        if (param !== undefined) assert.strictEqual(answer.body.error.param, param, JSON.stringify(answer.body))
      }
      // another organisation's connection, or none: not found
      const other = yield* otherOrganisation
      expect(
        yield* call("POST", CREATE, { token: other, json: { connection_id: conn.connection_id } }),
        404,
        "resource_not_found"
      )
      expect(
        yield* call("POST", CREATE, { token: me.access, json: { connection_id: "conn_nope" } }),
        404,
        "resource_not_found"
      )
      // provider or state that disagree with the connection's
      expect(
        yield* call("POST", CREATE, {
          token: me.access,
          json: { connection_id: conn.connection_id, provider: "provider_b" }
        }),
        400,
        "invalid_parameter",
        "provider"
      )
      expect(
        yield* call("POST", CREATE, { token: me.access, json: { connection_id: conn.connection_id, state: "MI" } }),
        400,
        "invalid_parameter",
        "state"
      )
      // a login the sandbox refuses
      const refused = yield* call("POST", CREATE, {
        token: me.access,
        json: { connection_id: conn.connection_id, credentials: { user_api_key: "user_bad" } }
      })
      assert.strictEqual(refused.status, 400, JSON.stringify(refused.body))
      assert.strictEqual(refused.body.error.param, "credentials")
      // without connection_id, provider and state are needed
      expect(
        yield* call("POST", CREATE, { token: me.access, json: { state: "CO" } }),
        400,
        "missing_parameter",
        "provider"
      )
      expect(
        yield* call("POST", CREATE, { token: me.access, json: { provider: "provider_a" } }),
        400,
        "missing_parameter",
        "state"
      )
      // a disconnected connection is not reopened
      yield* call("DELETE", `/v1/connections/${conn.connection_id}`, { token: me.access })
      expect(
        yield* call("POST", CREATE, { token: me.access, json: { connection_id: conn.connection_id } }),
        409,
        "connection_inactive"
      )
      const listed = yield* call("GET", "/v1/connections", { token: me.access })
      assert.strictEqual(listed.body.pagination.total, 1)
      assert.strictEqual(listed.body.data[0].status, "inactive")
    }).pipe(Effect.provide(TestApp)))
})
