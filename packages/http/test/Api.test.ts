/**
 * End to end through the real server: OAuth, link, connections, facilities and resources on
 * sandbox connections (real adapters, in-process emulator), envelopes and errors.
 */
import { assert, describe, it } from "@effect/vitest"
import { Package, ProviderError } from "@tracebridge/core"
import { Bootstrap, Errors } from "@tracebridge/http"
import { ConfigProvider, Duration, Effect, Option, TestClock } from "effect"
import { call, linkSandbox, otherOrganisation, signIn, TestApp } from "./support/TestApp.js"
import { webhookApp } from "./support/WebhookApp.js"

describe("Api", () => {
  it.effect("issues tokens for the client-credentials grant, from JSON or a form", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const form = yield* call("POST", "/v1/oauth/token", {
        form: { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret }
      })
      assert.strictEqual(form.status, 200)
      assert.strictEqual(form.body.token_type, "Bearer")
      assert.strictEqual(form.body.expires_in, 3600)
      assert.match(form.body.access_token, /^tb_at_/)
      assert.strictEqual(form.body.scope, "sandbox")
    }).pipe(Effect.provide(TestApp)))

  it.effect("answers each OAuth error with its RFC 6749 code and status", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const cases: Array<[unknown, number, string]> = [
        [{ grant_type: "client_credentials", client_id: me.client_id, client_secret: "wrong" }, 401, "invalid_client"],
        [
          { grant_type: "password", client_id: me.client_id, client_secret: me.client_secret },
          400,
          "unsupported_grant_type"
        ],
        [
          { grant_type: "client_credentials", client_id: me.client_id, client_secret: me.client_secret, extra: "x" },
          400,
          "invalid_request"
        ],
        [
          {
            grant_type: "client_credentials",
            client_id: me.client_id,
            client_secret: me.client_secret,
            scope: "production"
          },
          400,
          "invalid_scope"
        ],
        [{ grant_type: "refresh_token", refresh_token: "tb_rt_nope" }, 400, "invalid_grant"],
        [{ client_id: me.client_id }, 400, "invalid_request"]
      ]
      for (const [json, status, error] of cases) {
        const answer = yield* call("POST", "/v1/oauth/token", { json })
        assert.strictEqual(answer.status, status, JSON.stringify(json))
        assert.strictEqual(answer.body.error, error)
      }
      const empty = yield* call("POST", "/v1/oauth/token", { raw: "", contentType: "application/json" })
      assert.strictEqual(empty.body.error, "invalid_request")
    }).pipe(Effect.provide(TestApp)))

  it.effect("rotates refresh tokens and revokes the family when an old one is reused", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const first = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "refresh_token", refresh_token: me.refresh }
      })
      assert.strictEqual(first.status, 200)
      assert.notStrictEqual(first.body.refresh_token, me.refresh)
      const reuse = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "refresh_token", refresh_token: me.refresh }
      })
      assert.strictEqual(reuse.body.error, "invalid_grant")
      const rotated = yield* call("POST", "/v1/oauth/token", {
        json: { grant_type: "refresh_token", refresh_token: first.body.refresh_token }
      })
      assert.strictEqual(rotated.body.error, "invalid_grant", "the whole family is revoked")
    }).pipe(Effect.provide(TestApp)))

  it.effect("links a sandbox connection, gives the connection token once, and lists it", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const link = yield* call("POST", "/v1/link/token/create", {
        token: me.access,
        json: { external_id: "mine-1", state: "xyz" }
      })
      assert.strictEqual(link.status, 200)
      assert.match(link.body.data.link_token, /^link-sandbox-/)
      assert.strictEqual(link.headers["x-request-id"], link.body.meta.request_id)
      const created = yield* call("POST", "/v1/sandbox/public_token/create", {
        token: me.access,
        json: { provider: "provider_a", state: "CO" }
      })
      assert.strictEqual(created.status, 200)
      const exchanged = yield* call("POST", "/v1/link/token/exchange", {
        token: me.access,
        json: { public_token: created.body.data.public_token }
      })
      assert.strictEqual(exchanged.status, 200)
      assert.strictEqual(exchanged.body.data.status, "active")
      assert.match(exchanged.body.data.connection_token, /^tb_ct_/)
      const again = yield* call("POST", "/v1/link/token/exchange", {
        token: me.access,
        json: { public_token: created.body.data.public_token }
      })
      assert.strictEqual(again.status, 400)
      assert.deepStrictEqual(Object.keys(again.body.error).sort(), ["code", "message", "param", "request_id", "type"])
      assert.strictEqual(again.body.error.type, "validation_error")
      const list = yield* call("GET", "/v1/connections", { token: me.access })
      assert.strictEqual(list.body.pagination.total, 1)
      assert.strictEqual(list.body.data[0].capabilities.sales_deliveries, true)
      const byConnectionToken = yield* call("GET", `/v1/connections/${exchanged.body.data.connection_id}`, {
        token: exchanged.body.data.connection_token
      })
      assert.strictEqual(byConnectionToken.status, 200)
    }).pipe(Effect.provide(TestApp)))

  it.effect("serves facilities and packages of a sandbox connection with exactly the spec's fields", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, {
        token: me.access
      })
      assert.strictEqual(facilities.status, 200)
      assert.strictEqual(facilities.body.pagination.total, 5)
      const facility = facilities.body.data[0]
      const base = `/v1/connections/${connection.connection_id}/facilities/${facility.id}`
      const packages = yield* call("GET", `${base}/packages?per_page=100`, { token: me.access })
      assert.strictEqual(packages.status, 200)
      assert.strictEqual(packages.body.meta.provider, "provider_a")
      for (const p of packages.body.data) {
        assert.deepStrictEqual(Object.keys(p).sort(), Object.keys(Package.Package.fields).sort())
      }
      const one = yield* call("GET", `${base}/packages/${packages.body.data[0].id}`, { token: me.access })
      assert.deepStrictEqual(one.body.data, packages.body.data[0])
      const chain = yield* call("GET", `${base}/packages/${packages.body.data[0].id}/chain_of_custody`, {
        token: me.access
      })
      assert.strictEqual(chain.status, 200)
      assert.isAbove(chain.body.data.harvests.length, 0)
    }).pipe(Effect.provide(TestApp)))

  it.effect("validates paging: 100 is the most, 0 and 101 and words are 400 invalid_parameter naming the parameter", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, {
        token: me.access
      })
      const base = `/v1/connections/${connection.connection_id}/facilities/${facilities.body.data[0].id}/packages`
      assert.strictEqual((yield* call("GET", `${base}?per_page=100`, { token: me.access })).status, 200)
      for (const q of ["per_page=101", "per_page=0", "per_page=abc", "page=0"]) {
        const answer = yield* call("GET", `${base}?${q}`, { token: me.access })
        assert.strictEqual(answer.status, 400, q)
        assert.strictEqual(answer.body.error.code, "invalid_parameter")
        assert.strictEqual(answer.body.error.param, q.split("=")[0])
        assert.isString(answer.body.error.request_id)
      }
      const total = (yield* call("GET", `${base}?per_page=10`, { token: me.access })).body.pagination
      const last = yield* call("GET", `${base}?per_page=10&page=${total.total_pages}`, { token: me.access })
      assert.strictEqual(last.body.data.length, total.total - (total.total_pages - 1) * 10)
      const past = yield* call("GET", `${base}?per_page=10&page=${total.total_pages + 1}`, { token: me.access })
      assert.deepStrictEqual(past.body.data, [])
    }).pipe(Effect.provide(TestApp)))

  it.effect("enforces the auth matrix: no token 401, another organisation 404, another connection's token 403", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const a = yield* linkSandbox(me.access)
      const b = yield* linkSandbox(me.access)
      const other = yield* otherOrganisation
      const path = `/v1/connections/${a.connection_id}`
      assert.strictEqual((yield* call("GET", path)).status, 401)
      assert.strictEqual((yield* call("GET", path, { token: "tb_at_forged" })).body.error.code, "unauthorized")
      const foreign = yield* call("GET", path, { token: other })
      assert.strictEqual(foreign.status, 404)
      assert.strictEqual(foreign.body.error.code, "resource_not_found")
      const crossed = yield* call("GET", path, { token: b.connection_token! })
      assert.strictEqual(crossed.status, 403)
      assert.strictEqual(crossed.body.error.code, "forbidden")
    }).pipe(Effect.provide(TestApp)))

  it.effect("writes on a sandbox connection answer 201 with the created resource; a refused split is 422 and changes nothing", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, {
        token: me.access
      })
      const base = `/v1/connections/${connection.connection_id}/facilities/${facilities.body.data[0].id}`
      const packages =
        (yield* call("GET", `${base}/packages?per_page=100&is_on_hold=false`, { token: me.access })).body.data
      const source = packages.find((p: any) => p.quantity > 10)
      const split = {
        item_name: source.item_name,
        item_category: source.item_category,
        item_strain: source.item_strain,
        quantity: 5,
        unit_of_measure: source.unit_of_measure,
        source_package_ids: [source.id]
      }
      const created = yield* call("POST", `${base}/packages`, { token: me.access, json: split })
      assert.strictEqual(created.status, 201)
      const read = yield* call("GET", `${base}/packages/${created.body.data.id}`, { token: me.access })
      assert.deepStrictEqual(read.body.data, created.body.data)
      const refused = yield* call("POST", `${base}/packages`, {
        token: me.access,
        json: { ...split, quantity: 1_000_000 }
      })
      assert.strictEqual(refused.status, 422)
      assert.strictEqual(refused.body.error.code, "insufficient_quantity")
      const after = (yield* call("GET", `${base}/packages/${source.id}`, { token: me.access })).body.data
      assert.strictEqual(after.quantity, Math.round((source.quantity - 5) * 1e4) / 1e4)
      const invalid = yield* call("POST", `${base}/packages`, { token: me.access, json: { ...split, quantity: -1 } })
      assert.strictEqual(invalid.status, 400)
      assert.strictEqual(invalid.body.error.param, "quantity")
    }).pipe(Effect.provide(TestApp)))

  it.effect("gates sales deliveries by capability and disconnects a connection", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const connection = yield* linkSandbox(me.access, "provider_b", "HI")
      const facilities = yield* call("GET", `/v1/connections/${connection.connection_id}/facilities`, {
        token: me.access
      })
      const base = `/v1/connections/${connection.connection_id}/facilities/${facilities.body.data[0].id}`
      const gated = yield* call("GET", `${base}/sales_deliveries`, { token: me.access })
      assert.strictEqual(gated.status, 403)
      assert.strictEqual(gated.body.error.code, "capability_not_enabled")
      const removed = yield* call("DELETE", `/v1/connections/${connection.connection_id}`, { token: me.access })
      assert.strictEqual(removed.body.data.status, "inactive")
      const after = yield* call("GET", `${base}/packages`, { token: me.access })
      assert.strictEqual(after.status, 409)
    }).pipe(Effect.provide(TestApp)))
})

describe("Api lifetimes and set-up", () => {
  it.effect("refuses an expired access token with 401 token_expired, and an expired public token with 400", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const created = yield* call("POST", "/v1/sandbox/public_token/create", {
        token: me.access,
        json: { provider: "provider_a", state: "CO" }
      })
      yield* TestClock.adjust("31 minutes")
      const stale = yield* call("POST", "/v1/link/token/exchange", {
        token: me.access,
        json: { public_token: created.body.data.public_token }
      })
      assert.strictEqual(stale.status, 400)
      assert.include(stale.body.error.message, "expired")
      yield* TestClock.adjust("30 minutes")
      const expired = yield* call("GET", "/v1/connections/", { token: me.access })
      assert.strictEqual(expired.status, 401)
      assert.strictEqual(expired.body.error.code, "token_expired")
      assert.strictEqual(expired.headers["x-request-id"], expired.body.error.request_id)
      // The worker is off: its delivery loop ticks every second, and this test moves the clock an
      // hour, which took 25 s of ticks (and timed out on a loaded machine).
    }).pipe(Effect.provide(webhookApp())))

  it.effect("answers /v1/connections and /v1/connections/ alike", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      yield* linkSandbox(me.access)
      const a = yield* call("GET", "/v1/connections", { token: me.access })
      const b = yield* call("GET", "/v1/connections/", { token: me.access })
      assert.deepStrictEqual(b.body.data, a.body.data)
      assert.strictEqual(b.body.pagination.total, 1)
    }).pipe(Effect.provide(TestApp)))

  it.effect("creates the first client with the credentials fixed by TRACEBRIDGE_CLIENT_ID and _SECRET", () =>
    Effect.gen(function*() {
      const created = yield* Bootstrap.ensureSandboxClient.pipe(
        Effect.withConfigProvider(
          ConfigProvider.fromMap(
            new Map([["TRACEBRIDGE_CLIENT_ID", "tb_client_fixed"], [
              "TRACEBRIDGE_CLIENT_SECRET",
              "tb_secret_fixed_0123456789"
            ]])
          )
        )
      )
      assert.deepStrictEqual(Option.getOrThrow(created), {
        client_id: "tb_client_fixed",
        client_secret: "tb_secret_fixed_0123456789"
      })
      const token = yield* call("POST", "/v1/oauth/token", {
        json: {
          grant_type: "client_credentials",
          client_id: "tb_client_fixed",
          client_secret: "tb_secret_fixed_0123456789"
        }
      })
      assert.strictEqual(token.status, 200)
      const again = yield* Bootstrap.ensureSandboxClient.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TRACEBRIDGE_CLIENT_ID", "tb_client_fixed"]])))
      )
      assert.isTrue(Option.isNone(again))
    }).pipe(Effect.provide(TestApp)))

  it.effect("maps a provider's Retry-After into seconds", () =>
    Effect.sync(() => {
      const error = new ProviderError.ProviderRateLimited({
        provider: "provider_a",
        operation: "x",
        message: "m",
        retryAfter: Duration.millis(1500)
      })
      assert.strictEqual(Errors.retryAfterOf(error), 2)
      assert.isUndefined(
        Errors.retryAfterOf(
          new ProviderError.ProviderRateLimited({ provider: "provider_a", operation: "x", message: "m" })
        )
      )
    }))
})

describe("Api refusals", () => {
  it.effect("answers broken JSON, unknown properties and unknown routes in the error envelope", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const broken = yield* call("POST", "/v1/link/token/create", {
        token: me.access,
        raw: "{bad",
        contentType: "application/json"
      })
      assert.strictEqual(broken.status, 400)
      assert.strictEqual(broken.body.error.code, "invalid_json")
      const extra = yield* call("POST", "/v1/link/token/create", { token: me.access, json: { colour: "red" } })
      assert.strictEqual(extra.status, 400)
      assert.strictEqual(extra.body.error.param, "colour")
      const nowhere = yield* call("GET", "/v1/nowhere", { token: me.access })
      assert.strictEqual(nowhere.status, 404)
      assert.strictEqual(nowhere.body.error.type, "not_found_error")
      assert.strictEqual(nowhere.headers["x-request-id"], nowhere.body.error.request_id)
    }).pipe(Effect.provide(TestApp)))
})
