/**
 * Issue 15, items 1–3: an `Idempotency-Key` is scoped to the principal that sent it and a replay
 * re-runs authorisation; a connection token reads and writes its own connection only (no link
 * tokens, exchanges or webhooks); the refresh grant checks a client id and secret when they are sent.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap } from "@tracebridge/http"
import { Effect } from "effect"
import { Accounts, call, linkSandbox, otherOrganisation, signIn, TestApp } from "../support/TestApp.js"

interface Raw {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly body: any
}

const post = (path: string, token: string, json: unknown, key?: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.post(path).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.bodyUnsafeJson(json)
    )
    if (key !== undefined) request = HttpClientRequest.setHeader(request, "Idempotency-Key", key)
    const response = yield* client.execute(request)
    const text = yield* response.text
    return { status: response.status, headers: response.headers, text, body: JSON.parse(text) } as Raw
  }).pipe(Effect.scoped)

const token = (json: Record<string, string>) => call("POST", "/v1/oauth/token", { json })

describe("Idempotency-Key scope (issue 15)", () => {
  it.effect("a connection token replaying an access token's key gets 403, never the stored webhook secret", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const body = { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }
      const created = yield* post("/v1/webhooks", me.access, body, "shared-key")
      assert.strictEqual(created.status, 201)
      assert.match(created.body.data.secret, /^whsec_/)

      const replayed = yield* post("/v1/webhooks", linked.connection_token!, body, "shared-key")
      assert.strictEqual(replayed.status, 403, replayed.text)
      assert.strictEqual(replayed.body.error.code, "forbidden")
      assert.isUndefined(replayed.headers["idempotent-replayed"])
      assert.notInclude(replayed.text, created.body.data.secret)
      assert.notInclude(replayed.text, created.body.data.id)
    }).pipe(Effect.provide(TestApp)))

  it.effect("a connection token replaying an exchange's key gets 403, never another connection's token", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const created = yield* call("POST", "/v1/sandbox/public_token/create", {
        token: me.access,
        json: { provider: "provider_a", state: "CO" }
      })
      const body = { public_token: created.body.data.public_token }
      const exchanged = yield* post("/v1/link/token/exchange", me.access, body, "exchange-key")
      assert.strictEqual(exchanged.status, 200, exchanged.text)
      assert.match(exchanged.body.data.connection_token, /^tb_ct_/)

      const replayed = yield* post("/v1/link/token/exchange", linked.connection_token!, body, "exchange-key")
      assert.strictEqual(replayed.status, 403, replayed.text)
      assert.strictEqual(replayed.body.error.code, "forbidden")
      assert.notInclude(replayed.text, exchanged.body.data.connection_token)
      assert.notInclude(replayed.text, exchanged.body.data.connection_id)
    }).pipe(Effect.provide(TestApp)))

  it.effect("another organisation reusing a key gets what it would get without one", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const stranger = yield* otherOrganisation
      const body = { url: "http://127.0.0.1:9/hook", events: ["lab_result.received"] }
      const mine = yield* post("/v1/webhooks", me.access, body, "org-key")
      const theirs = yield* post("/v1/webhooks", stranger, body, "org-key")
      assert.strictEqual(mine.status, 201)
      assert.strictEqual(theirs.status, 201, theirs.text)
      assert.isUndefined(theirs.headers["idempotent-replayed"])
      assert.notStrictEqual(theirs.body.data.id, mine.body.data.id)
      assert.notStrictEqual(theirs.body.data.secret, mine.body.data.secret)
      // and their own replay is theirs
      const again = yield* post("/v1/webhooks", stranger, body, "org-key")
      assert.strictEqual(again.headers["idempotent-replayed"], "true")
      assert.strictEqual(again.text, theirs.text)
    }).pipe(Effect.provide(TestApp)))

  it.effect("a replay by the same principal re-runs authorisation", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const path = `/v1/sandbox/${linked.connection_id}/simulate`
      const first = yield* post(path, linked.connection_token!, { scenario: "transfer_arrived" }, "sim-key")
      assert.strictEqual(first.status, 200, first.text)
      // the connection is disconnected: its token is revoked, and a replay is refused like any request
      const removed = yield* call("DELETE", `/v1/connections/${linked.connection_id}`, { token: me.access })
      assert.strictEqual(removed.status, 200, JSON.stringify(removed.body))
      const replayed = yield* post(path, linked.connection_token!, { scenario: "transfer_arrived" }, "sim-key")
      assert.strictEqual(replayed.status, 401, replayed.text)
      assert.isUndefined(replayed.headers["idempotent-replayed"])
      // the organisation's own token never sees the connection token's stored answer either
      const mine = yield* post(path, me.access, { scenario: "transfer_arrived" }, "sim-key")
      assert.isUndefined(mine.headers["idempotent-replayed"])
      assert.notStrictEqual(mine.text, first.text)
    }).pipe(Effect.provide(TestApp)))
})

describe("connection tokens reach their own connection only (issue 15)", () => {
  it.effect("link tokens, exchanges and sandbox public tokens are 403 forbidden", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const ct = linked.connection_token!
      const created = yield* call("POST", "/v1/sandbox/public_token/create", {
        token: me.access,
        json: { provider: "provider_a", state: "CO" }
      })
      const attempts: ReadonlyArray<readonly [string, unknown]> = [
        ["/v1/link/token/create", { external_id: "x" }],
        ["/v1/link/token/create", { connection_id: linked.connection_id }],
        ["/v1/link/token/exchange", { public_token: created.body.data.public_token }],
        ["/v1/sandbox/public_token/create", { provider: "provider_a", state: "CO" }],
        ["/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }]
      ]
      for (const [path, json] of attempts) {
        const answer = yield* post(path, ct, json)
        assert.strictEqual(answer.status, 403, `${path}: ${answer.text}`)
        assert.strictEqual(answer.body.error.type, "permission_error", path)
        assert.strictEqual(answer.body.error.code, "forbidden", path)
      }
      // the public token was not spent by the refused exchange
      const exchanged = yield* post("/v1/link/token/exchange", me.access, {
        public_token: created.body.data.public_token
      })
      assert.strictEqual(exchanged.status, 200, exchanged.text)
    }).pipe(Effect.provide(TestApp)))
})

describe("refresh grant with client credentials (issue 15)", () => {
  it.effect("a wrong secret is 401 invalid_client and leaves the refresh token unspent", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const wrong = yield* token({
        grant_type: "refresh_token",
        refresh_token: me.refresh,
        client_id: me.client_id,
        client_secret: "tb_secret_wrong"
      })
      assert.strictEqual(wrong.status, 401)
      assert.strictEqual(wrong.body.error, "invalid_client")
      const unknown = yield* token({
        grant_type: "refresh_token",
        refresh_token: me.refresh,
        client_id: "tb_client_nope",
        client_secret: me.client_secret
      })
      assert.strictEqual(unknown.status, 401)
      assert.strictEqual(unknown.body.error, "invalid_client")
      const secretOnly = yield* token({
        grant_type: "refresh_token",
        refresh_token: me.refresh,
        client_secret: "tb_secret_wrong"
      })
      assert.strictEqual(secretOnly.status, 401)
      assert.strictEqual(secretOnly.body.error, "invalid_client")
      const right = yield* token({
        grant_type: "refresh_token",
        refresh_token: me.refresh,
        client_id: me.client_id,
        client_secret: me.client_secret
      })
      assert.strictEqual(right.status, 200, JSON.stringify(right.body))
    }).pipe(Effect.provide(TestApp)))

  it.effect("another client's refresh token is 400 invalid_grant; without a secret refresh still works", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const accounts = yield* Accounts
      const organisation = (yield* accounts.listOrganisations())[0]!
      const other = yield* Bootstrap.createClient(organisation.id)
      const theft = yield* token({
        grant_type: "refresh_token",
        refresh_token: me.refresh,
        client_id: other.client_id,
        client_secret: other.client_secret
      })
      assert.strictEqual(theft.status, 400)
      assert.strictEqual(theft.body.error, "invalid_grant")
      const idOnly = yield* token({
        grant_type: "refresh_token",
        refresh_token: me.refresh,
        client_id: other.client_id
      })
      assert.strictEqual(idOnly.status, 400)
      assert.strictEqual(idOnly.body.error, "invalid_grant")
      const plain = yield* token({ grant_type: "refresh_token", refresh_token: me.refresh })
      assert.strictEqual(plain.status, 200, JSON.stringify(plain.body))
    }).pipe(Effect.provide(TestApp)))
})
