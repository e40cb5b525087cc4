/**
 * Webhooks end to end: subscriptions, the URL rules, simulate with every effect it promises, and
 * delivery (signature, headers, retries on the TestClock, rotation, redelivery, DNS rebinding).
 * The worker is off in these tests: each drives the dispatcher with `runDue`.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { WebhookSignature } from "@tracebridge/core"
import type { Http } from "@tracebridge/http"
import { Bootstrap } from "@tracebridge/http"
import { Scenario } from "@tracebridge/sandbox"
import { Duration, Effect, Option, TestClock } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import { Providers } from "../src/services/Providers.js"
import * as UrlGuard from "../src/services/UrlGuard.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { receiver } from "./support/Receiver.js"
import { call, insertProductionConnection, linkSandbox, signIn } from "./support/TestApp.js"
import { webhookApp } from "./support/WebhookApp.js"

/** Tests start on a realistic day (the sandbox dates worlds from the clock). */
const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const withApp = (options: Http.Options = {}) => <A, E, R>(program: Effect.Effect<A, E, R>) =>
  Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, webhookApp(options)))

const patch = (path: string, token: string, json: unknown) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const response = yield* client.execute(
      HttpClientRequest.patch(path).pipe(
        HttpClientRequest.bearerToken(token),
        HttpClientRequest.bodyUnsafeJson(json)
      )
    )
    const text = yield* response.text
    return { status: response.status, body: text === "" ? null : JSON.parse(text) }
  }).pipe(Effect.scoped)

/** Receiver URLs of a scheme other than http(s): each is refused with 400 naming `url`. */
const nonHttpUrls = [
  "javascript:alert(1)",
  "JavaScript:alert(document.cookie)//https://example.com/",
  " javascript:alert(1)",
  "java\tscript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "file:///etc/passwd",
  "ws://127.0.0.1:8080/hooks",
  "mailto:ops@example.com"
]

/** An organisation on the production plan, with its access token. */
const productionOrganisation = Effect.gen(function*() {
  const organisation = yield* Bootstrap.createOrganisation("Production org", "production")
  const client = yield* Bootstrap.createClient(organisation.id)
  const token = yield* call("POST", "/v1/oauth/token", { json: { grant_type: "client_credentials", ...client } })
  return { organisation, access: token.body.access_token as string }
})

const subscribe = (access: string, url: string, events: ReadonlyArray<string> = ["lab_result.received"]) =>
  Effect.map(call("POST", "/v1/webhooks/", { token: access, json: { url, events } }), (r) => {
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body.data as { id: string; secret: string }
  })

const simulate = (access: string, connection: string, scenario: string, params: unknown = {}) =>
  call("POST", `/v1/sandbox/${connection}/simulate`, { token: access, json: { scenario, params } })

const runDue = Effect.flatMap(WebhookDispatcher, (d) => d.runDue)

/** A fresh access token (they live an hour; these tests move the clock by days). */
const renew = (client: { readonly client_id: string; readonly client_secret: string }) =>
  Effect.map(
    call("POST", "/v1/oauth/token", {
      json: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret }
    }),
    (r) => r.body.access_token as string
  )

describe("Webhook subscriptions", () => {
  it.effect("create shows the whsec_ secret once; list, get, update, delete never show it", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const created = yield* call("POST", "/v1/webhooks/", {
        token: access,
        json: {
          url: "http://127.0.0.1:9/hooks",
          events: ["transfer.arrived", "lab_result.received"],
          description: "ops"
        }
      })
      assert.strictEqual(created.status, 201)
      const data = created.body.data
      assert.match(data.secret, /^whsec_[A-Za-z0-9_-]{20,}$/)
      assert.deepStrictEqual(Object.keys(data).sort(), [
        "created_at",
        "description",
        "events",
        "id",
        "secret",
        "status",
        "url"
      ])
      assert.deepStrictEqual([data.status, data.description, data.events], ["enabled", "ops", [
        "transfer.arrived",
        "lab_result.received"
      ]])
      const got = yield* call("GET", `/v1/webhooks/${data.id}`, { token: access })
      assert.strictEqual(got.status, 200)
      assert.isUndefined(got.body.data.secret)
      const listed = yield* call("GET", "/v1/webhooks", { token: access })
      assert.deepStrictEqual(listed.body.data.map((w: any) => w.id), [data.id])
      assert.notInclude(JSON.stringify(listed.body), data.secret)
      assert.strictEqual(listed.body.pagination.total, 1)

      const updated = yield* patch(`/v1/webhooks/${data.id}`, access, {
        events: ["transfer.completed"],
        status: "disabled",
        description: null
      })
      assert.strictEqual(updated.status, 200)
      assert.deepStrictEqual(
        [updated.body.data.events, updated.body.data.status, updated.body.data.description],
        [["transfer.completed"], "disabled", null]
      )
      assert.isUndefined(updated.body.data.secret)

      const removed = yield* call("DELETE", `/v1/webhooks/${data.id}`, { token: access })
      assert.deepStrictEqual(removed.body.data, { id: data.id, deleted: true })
      const gone = yield* call("GET", `/v1/webhooks/${data.id}`, { token: access })
      assert.strictEqual(gone.status, 404)
      assert.strictEqual(gone.body.error.code, "resource_not_found")
    }).pipe(withApp()))

  it.effect("an unknown event name is a 400; another organisation's webhook is a 404", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const bad = yield* call("POST", "/v1/webhooks/", {
        token: access,
        json: { url: "http://127.0.0.1:9/hooks", events: ["transfer.exploded"] }
      })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.type, "validation_error")
      assert.strictEqual(bad.body.error.param, "events.0")
      const empty = yield* call("POST", "/v1/webhooks/", {
        token: access,
        json: { url: "http://127.0.0.1:9/", events: [] }
      })
      assert.strictEqual(empty.status, 400)
      const mine = yield* subscribe(access, "http://127.0.0.1:9/hooks")
      const other = yield* productionOrganisation
      const theirs = yield* call("GET", `/v1/webhooks/${mine.id}`, { token: other.access })
      assert.strictEqual(theirs.status, 404)
    }).pipe(withApp()))

  it.effect("SSRF guard: production needs https and a public address; sandbox may use http and loopback only", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const prod = yield* productionOrganisation
      const status = (token: string, url: string) =>
        Effect.map(
          call("POST", "/v1/webhooks/", { token, json: { url, events: ["transfer.arrived"] } }),
          (r) => r.status === 201 ? "ok" : `${r.status} ${r.body.error.param}`
        )
      // Sandbox organisations: http and loopback are fine; private and link-local are not.
      assert.strictEqual(yield* status(access, "http://127.0.0.1:8080/hooks"), "ok")
      assert.strictEqual(yield* status(access, "http://[::1]:8080/hooks"), "ok")
      assert.strictEqual(yield* status(access, "http://10.0.0.8/hooks"), "400 url")
      assert.strictEqual(yield* status(access, "http://169.254.169.254/latest/meta-data"), "400 url")
      assert.strictEqual(yield* status(access, "ftp://example.com/hooks"), "400 url")
      // a scheme other than http(s) is refused on either plan (a script or data URL, a file)
      for (const url of nonHttpUrls) {
        assert.strictEqual(yield* status(access, url), "400 url", url)
        assert.strictEqual(yield* status(prod.access, url), "400 url", url)
      }
      const made = yield* subscribe(access, "http://127.0.0.1:8080/edited")
      for (const url of nonHttpUrls) {
        const edited = yield* patch(`/v1/webhooks/${made.id}`, access, { url })
        assert.strictEqual(edited.status, 400, `${url}: ${JSON.stringify(edited.body)}`)
        assert.strictEqual(edited.body.error.param, "url", url)
      }
      assert.strictEqual(
        (yield* call("GET", `/v1/webhooks/${made.id}`, { token: access })).body.data.url,
        "http://127.0.0.1:8080/edited"
      )
      // Production: https only, never loopback, private, link-local, mapped or shared addresses.
      for (
        const url of [
          "http://93.184.216.34/hooks",
          "https://127.0.0.1/hooks",
          "https://[::1]/hooks",
          "https://10.1.2.3/hooks",
          "https://172.20.0.1/hooks",
          "https://192.168.1.10/hooks",
          "https://169.254.169.254/hooks",
          "https://[fe80::1]/hooks",
          "https://[fd00::1]/hooks",
          "https://[::ffff:10.0.0.1]/hooks",
          "https://100.64.0.1/hooks",
          "https://localhost/hooks"
        ]
      ) assert.strictEqual(yield* status(prod.access, url), "400 url", url)
      assert.strictEqual(yield* status(prod.access, "https://93.184.216.34/hooks"), "ok")
    }).pipe(withApp()))

  it.effect("at delivery time the address is checked again: a name rebound to loopback is refused", () =>
    Effect.gen(function*() {
      const prod = yield* productionOrganisation
      const hook = yield* subscribe(prod.access, "https://hooks.rebind.test/in")
      // Queue an event for the production organisation directly (its connections are production).
      const webhookStore = yield* WebhookStore
      yield* webhookStore.insertWebhookEvent({
        id: "evt_rebind",
        organisation_id: prod.organisation.id,
        connection_id: "conn_x",
        type: "lab_result.received",
        body: "{}",
        created_at: 0,
        trace_parent: null
      }, [{
        id: "whd_rebind",
        organisation_id: prod.organisation.id,
        endpoint_id: hook.id,
        event_id: "evt_rebind",
        event_type: "lab_result.received",
        status: "pending",
        attempts: 0,
        claims: 0,
        next_attempt_at: 0,
        locked_until: null,
        created_at: 0,
        updated_at: 0
      }])
      assert.strictEqual(yield* runDue, 1)
      const log = yield* call("GET", `/v1/webhooks/${hook.id}/deliveries`, { token: prod.access })
      const attempt = log.body.data[0].attempts[0]
      assert.strictEqual(attempt.status_code, null)
      assert.match(attempt.error, /refused: hooks\.rebind\.test resolves to 127\.0\.0\.1 is a loopback address/)
      assert.strictEqual(log.body.data[0].status, "pending")
    }).pipe(
      withApp({
        // Public when the subscription is made, loopback afterwards.
        urlGuard: (() => {
          let calls = 0
          return UrlGuard.layerWith(() => Effect.succeed(calls++ === 0 ? ["93.184.216.34"] : ["127.0.0.1"]))
        })()
      })
    ))

  it.effect("a connection token may not manage webhooks", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const refused = yield* call("GET", "/v1/webhooks", { token: linked.connection_token! })
      assert.strictEqual(refused.status, 403)
      assert.strictEqual(refused.body.error.code, "forbidden")
    }).pipe(withApp()))
})

describe("Simulate", () => {
  it.effect("lab_result_received with result fail: passed false, the failed panel, and the package reads TestFailed", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      yield* subscribe(access, "http://127.0.0.1:9/hooks", ["lab_result.received"])
      yield* subscribe(access, "http://127.0.0.1:9/other", ["transfer.arrived"])
      const r = yield* simulate(access, linked.connection_id, "lab_result_received", { result: "fail" })
      assert.strictEqual(r.status, 200, JSON.stringify(r.body))
      const { data } = r.body
      assert.strictEqual(data.scenario, "lab_result_received")
      assert.strictEqual(data.deliveries, 1)
      assert.strictEqual(data.event.type, "lab_result.received")
      assert.match(data.event.id, /^evt_/)
      assert.strictEqual(data.event.api_version, "0.1.0")
      assert.strictEqual(data.event.data.connection_id, linked.connection_id)
      assert.isFalse(data.event.data.passed)
      assert.deepStrictEqual(data.event.data.failed_panel, ["Microbiologicals", "Pesticides"])
      assert.isFalse(data.event.data.lab_result.overall_passed)
      const pkg = yield* call(
        "GET",
        `/v1/connections/${linked.connection_id}/facilities/${data.event.data.facility_id}/packages/${data.event.data.package_id}`,
        { token: access }
      )
      assert.strictEqual(pkg.status, 200)
      assert.strictEqual(pkg.body.data.lab_testing_state, "TestFailed")
      assert.strictEqual(pkg.body.data.tag, data.event.data.package_tag)
    }).pipe(withApp()))

  it.effect("the event is the scenario's change in the connection's envelope: its id from the world and the sandbox version (issue #31)", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, "http://127.0.0.1:9/hooks", ["lab_result.received"])
      const connections = yield* ConnectionStore
      const providers = yield* Providers
      const webhookStore = yield* WebhookStore
      const answered: Array<string> = []
      for (const result of ["fail", "pass"]) {
        const before = Option.getOrThrow(yield* connections.getConnection(linked.connection_id))
        const r = yield* simulate(access, linked.connection_id, "lab_result_received", { result })
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        const event = r.body.data.event
        // the id the connection's version made before the envelope left the sandbox, and made here now
        assert.strictEqual(event.id, Scenario.eventId(providers.state.world(before), before.sandbox_version))
        assert.strictEqual(event.created, new Date(T0).toISOString())
        assert.strictEqual(event.api_version, "0.1.0")
        assert.strictEqual(event.data.connection_id, linked.connection_id)
        answered.push(event.id)
      }
      assert.strictEqual(new Set(answered).size, 2, "every simulation's event has an id of its own")
      // what was enqueued is the event answered
      const queued = yield* webhookStore.listWebhookDeliveries(hook.id, 0, 10)
      assert.deepStrictEqual(queued.items.map((d) => d.event_id).sort(), [...answered].sort())
    }).pipe(withApp()))

  it.effect("transfer_arrived fires transfer.arrived, then the transfers list shows actual_arrival", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access, "provider_a")
      const r = yield* simulate(access, linked.connection_id, "transfer_arrived")
      assert.strictEqual(r.status, 200, JSON.stringify(r.body))
      const event = r.body.data.event
      assert.strictEqual(event.type, "transfer.arrived")
      assert.strictEqual(r.body.data.deliveries, 0)
      assert.isNotNull(event.data.transfer.actual_arrival)
      const list = yield* call(
        "GET",
        `/v1/connections/${linked.connection_id}/facilities/${event.data.facility_id}/transfers?per_page=100`,
        { token: access }
      )
      assert.strictEqual(list.status, 200, JSON.stringify(list.body))
      const found = list.body.data.find((t: any) => t.id === event.data.id)
      assert.isDefined(found)
      assert.strictEqual(found.actual_arrival, event.data.transfer.actual_arrival)
      const done = yield* simulate(access, linked.connection_id, "transfer_completed", {
        transfer_id: event.data.id,
        outcome: "received"
      })
      assert.strictEqual(done.body.data.event.type, "transfer.completed")
      assert.strictEqual(done.body.data.event.data.transfer.status, "received")
      const again = yield* simulate(access, linked.connection_id, "transfer_completed", { transfer_id: event.data.id })
      assert.strictEqual(again.status, 409)
      assert.strictEqual(again.body.error.code, "invalid_state_transition")
    }).pipe(withApp()))

  it.effect("state-only scenarios answer event null; connection_login_required moves the connection to error", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      for (const scenario of ["plant_phase_advanced", "package_hold"]) {
        const r = yield* simulate(access, linked.connection_id, scenario)
        assert.strictEqual(r.status, 200, scenario)
        assert.deepStrictEqual([r.body.data.event, r.body.data.deliveries], [null, 0])
      }
      const login = yield* simulate(access, linked.connection_id, "connection_login_required")
      assert.strictEqual(login.status, 200)
      const connection = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: access })
      assert.strictEqual(connection.body.data.status, "error")
    }).pipe(withApp()))

  it.effect("an unknown scenario or bad params is a 400, a production connection a 403 sandbox_only", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const unknown = yield* simulate(access, linked.connection_id, "meteor_strike")
      assert.strictEqual(unknown.status, 400)
      assert.deepStrictEqual([unknown.body.error.code, unknown.body.error.param], ["unknown_scenario", "scenario"])
      const bad = yield* simulate(access, linked.connection_id, "lab_result_received", { result: "maybe" })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.body.error.code, "invalid_parameter")
      const missing = yield* simulate(access, "conn_missing", "transfer_arrived")
      assert.strictEqual(missing.status, 404)

      const prod = yield* productionOrganisation
      yield* insertProductionConnection(prod.organisation.id, "conn_production")
      const refused = yield* simulate(prod.access, "conn_production", "transfer_arrived")
      assert.strictEqual(refused.status, 403)
      assert.deepStrictEqual([refused.body.error.type, refused.body.error.code], ["permission_error", "sandbox_only"])
    }).pipe(withApp()))
})

describe("Delivery", () => {
  it.scoped("signed t=…,v1=… over the raw body with the event headers; the log shows the attempt", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      const r = yield* simulate(access, linked.connection_id, "lab_result_received", { result: "fail" })
      assert.strictEqual(r.body.data.deliveries, 1)
      assert.strictEqual(yield* runDue, 1)
      assert.strictEqual(hooks.received.length, 1)
      const got = hooks.received[0]!
      assert.deepStrictEqual(JSON.parse(got.body), r.body.data.event)
      assert.strictEqual(got.headers["x-tracebridge-event-id"], r.body.data.event.id)
      assert.strictEqual(got.headers["x-tracebridge-event-type"], "lab_result.received")
      assert.strictEqual(got.headers["content-type"], "application/json")
      const header = got.headers["x-tracebridge-signature"] as string
      assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/)
      yield* WebhookSignature.verify(got.body, header, [hook.secret])
      const log = yield* call("GET", `/v1/webhooks/${hook.id}/deliveries`, { token: access })
      assert.strictEqual(log.body.data.length, 1)
      const d = log.body.data[0]
      assert.deepStrictEqual([d.status, d.event_id, d.event_type, d.next_attempt_at], [
        "succeeded",
        r.body.data.event.id,
        "lab_result.received",
        null
      ])
      assert.deepStrictEqual(d.attempts.map((a: any) => [a.attempt, a.status_code, a.error]), [[1, 200, null]])
      // Nothing is due any more.
      assert.strictEqual(yield* runDue, 0)
    }).pipe(withApp()))

  it.scoped("a 3xx is a failed attempt, never followed (a redirect could lead to an internal address)", () =>
    Effect.gen(function*() {
      const target = yield* receiver([200])
      const redirecting = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const server = http.createServer((req, res) => {
            req.resume()
            req.on("end", () => res.writeHead(302, { location: target.url }).end())
          })
          server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
        }),
        (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
      )
      const url = `http://127.0.0.1:${(redirecting.address() as AddressInfo).port}/hooks`
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, url)
      yield* simulate(access, linked.connection_id, "lab_result_received")
      assert.strictEqual(yield* runDue, 1)
      assert.strictEqual(target.received.length, 0, "the redirect was followed")
      const log = yield* call("GET", `/v1/webhooks/${hook.id}/deliveries`, { token: access })
      const d = log.body.data[0]
      assert.strictEqual(d.status, "pending")
      assert.deepStrictEqual(d.attempts.map((a: any) => [a.status_code, a.error]), [[302, "answered 302"]])
    }).pipe(withApp()))

  it.scoped("retries on the TestClock: 500, 500, then 200, every attempt logged, the event id stable", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([500, 500, 200])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url, ["transfer.arrived"])
      yield* simulate(access, linked.connection_id, "transfer_arrived")
      assert.strictEqual(yield* runDue, 1)
      assert.strictEqual(yield* runDue, 0) // the retry is not due yet
      yield* TestClock.adjust(Duration.seconds(59))
      assert.strictEqual(yield* runDue, 0)
      yield* TestClock.adjust(Duration.seconds(1)) // about 1 min after the first attempt
      assert.strictEqual(yield* runDue, 1)
      yield* TestClock.adjust(Duration.minutes(4))
      assert.strictEqual(yield* runDue, 0)
      yield* TestClock.adjust(Duration.minutes(1)) // 5 min after the second
      assert.strictEqual(yield* runDue, 1)
      assert.strictEqual(hooks.received.length, 3)
      assert.strictEqual(new Set(hooks.received.map((r) => r.headers["x-tracebridge-event-id"])).size, 1)
      assert.strictEqual(new Set(hooks.received.map((r) => r.body)).size, 1)
      const log = yield* call("GET", `/v1/webhooks/${hook.id}/deliveries`, { token: access })
      const d = log.body.data[0]
      assert.strictEqual(d.status, "succeeded")
      assert.deepStrictEqual(d.attempts.map((a: any) => [a.attempt, a.status_code, a.error]), [
        // the receiver's answer ("ok"), its first 1 KB at most, is logged with the status
        [1, 500, "answered 500: ok"],
        [2, 500, "answered 500: ok"],
        [3, 200, null]
      ])
      assert.deepStrictEqual(d.attempts.map((a: any) => a.at), [
        "2026-01-15T12:00:00.000Z",
        "2026-01-15T12:01:00.000Z",
        "2026-01-15T12:06:00.000Z"
      ])
    }).pipe(withApp()))

  it.scoped("after the whole schedule (1 min … 24 h) the delivery is failed; retry redelivers it now", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([503])
      const { access, ...client } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      yield* simulate(access, linked.connection_id, "lab_result_received")
      assert.strictEqual(yield* runDue, 1)
      for (
        const wait of [
          Duration.minutes(1),
          Duration.minutes(5),
          Duration.minutes(30),
          Duration.hours(2),
          Duration.hours(6),
          Duration.hours(12),
          Duration.hours(24)
        ]
      ) {
        yield* TestClock.adjust(wait)
        assert.strictEqual(yield* runDue, 1)
      }
      yield* TestClock.adjust(Duration.days(7))
      assert.strictEqual(yield* runDue, 0)
      assert.strictEqual(hooks.received.length, 8)
      const access2 = yield* renew(client)
      const log = yield* call("GET", `/v1/webhooks/${hook.id}/deliveries`, { token: access2 })
      assert.strictEqual(log.status, 200, JSON.stringify(log.body))
      const d = log.body.data[0]
      assert.deepStrictEqual([d.status, d.attempts.length, d.next_attempt_at], ["failed", 8, null])

      hooks.script.splice(0, hooks.script.length, 200)
      const retried = yield* call("POST", `/v1/webhooks/${hook.id}/deliveries/${d.id}/retry`, { token: access2 })
      assert.strictEqual(retried.status, 200)
      assert.strictEqual(retried.body.data.status, "pending")
      assert.strictEqual(yield* runDue, 1)
      assert.strictEqual(hooks.received.length, 9)
      assert.strictEqual(hooks.received[8]!.headers["x-tracebridge-event-id"], d.event_id)
      const after = yield* call("GET", `/v1/webhooks/${hook.id}/deliveries`, { token: access2 })
      assert.deepStrictEqual([after.body.data[0].status, after.body.data[0].attempts.length], ["succeeded", 9])
      const unknown = yield* call("POST", `/v1/webhooks/${hook.id}/deliveries/whd_nope/retry`, { token: access2 })
      assert.strictEqual(unknown.status, 404)
    }).pipe(withApp()))

  it.scoped("rotate_secret: both secrets sign for 24 h (two v1 entries), then only the new one", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      const { access, ...client } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      const rotated = yield* call("POST", `/v1/webhooks/${hook.id}/rotate_secret`, { token: access })
      assert.strictEqual(rotated.status, 200)
      const fresh = rotated.body.data.secret as string
      assert.match(fresh, /^whsec_/)
      assert.notStrictEqual(fresh, hook.secret)
      yield* simulate(access, linked.connection_id, "lab_result_received")
      yield* runDue
      const first = hooks.received[0]!
      const header = first.headers["x-tracebridge-signature"] as string
      assert.strictEqual(header.split(",").filter((p) => p.startsWith("v1=")).length, 2)
      yield* WebhookSignature.verify(first.body, header, [hook.secret])
      yield* WebhookSignature.verify(first.body, header, [fresh])

      yield* TestClock.adjust(Duration.hours(24))
      yield* simulate(yield* renew(client), linked.connection_id, "lab_result_received")
      assert.strictEqual(yield* runDue, 1)
      const second = hooks.received[1]!
      const later = second.headers["x-tracebridge-signature"] as string
      assert.strictEqual(later.split(",").filter((p) => p.startsWith("v1=")).length, 1)
      yield* WebhookSignature.verify(second.body, later, [fresh])
      const old = yield* Effect.either(WebhookSignature.verify(second.body, later, [hook.secret]))
      assert.isTrue(old._tag === "Left")
    }).pipe(withApp()))

  it.scoped("a disabled subscription gets no new deliveries", () =>
    Effect.gen(function*() {
      const hooks = yield* receiver([200])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const hook = yield* subscribe(access, hooks.url)
      yield* patch(`/v1/webhooks/${hook.id}`, access, { status: "disabled" })
      const r = yield* simulate(access, linked.connection_id, "lab_result_received")
      assert.strictEqual(r.body.data.deliveries, 0)
      assert.strictEqual(yield* runDue, 0)
      assert.strictEqual(hooks.received.length, 0)
      const webhookStore = yield* WebhookStore
      assert.isTrue(Option.isSome(yield* webhookStore.getWebhookEvent(r.body.data.event.id)))
    }).pipe(withApp()))
})
