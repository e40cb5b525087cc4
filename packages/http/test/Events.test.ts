/**
 * The events API (issue #34, DECISIONS "Events"): `GET /v1/events` lists what the organisation's
 * webhooks were sent, newest first, with each event's delivery summary, filtered by type,
 * connection, time and delivery success, and scoped by organisation and connection token;
 * `GET /v1/events/{event_id}` returns one; events past the retention are deleted. The worker is off:
 * deliveries are driven with `runDue`.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Http } from "@tracebridge/http"
import { Effect, TestClock } from "effect"
import { EventStore } from "../src/persistence/EventStore.js"
import * as Events from "../src/services/Events.js"
import { WebhookDispatcher } from "../src/services/WebhookDispatcher.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox, otherOrganisation, signIn } from "./support/TestApp.js"
import { webhookApp } from "./support/WebhookApp.js"

const T0 = Date.parse("2026-01-15T12:00:00.000Z")

const withApp = (options: Http.Options = {}) => <A, E, R>(program: Effect.Effect<A, E, R>) =>
  Effect.zipRight(TestClock.setTime(T0), Effect.provide(program, webhookApp(options)))

const simulate = (access: string, connection: string, scenario: string, params: unknown = {}) =>
  Effect.map(call("POST", `/v1/sandbox/${connection}/simulate`, { token: access, json: { scenario, params } }), (r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body.data.event as { id: string; type: string; data: unknown }
  })

const subscribe = (access: string, url: string, events: ReadonlyArray<string>) =>
  Effect.map(call("POST", "/v1/webhooks/", { token: access, json: { url, events } }), (r) => {
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body.data as { id: string }
  })

const list = (token: string, query = "") =>
  Effect.map(call("GET", `/v1/events${query}`, { token }), (r) => {
    assert.strictEqual(r.status, 200, JSON.stringify(r.body))
    return r.body as {
      data: ReadonlyArray<
        {
          id: string
          type: string
          created_at: string
          connection_id: string
          data: any
          delivery: {
            status: string
            endpoints: ReadonlyArray<{ webhook_id: string; status: string; attempts: number }>
          }
        }
      >
      pagination: { page: number; per_page: number; total: number; total_pages: number }
    }
  })

/** A fresh access token (they live an hour; the retention test moves the clock by days). */
const renew = (client: { readonly client_id: string; readonly client_secret: string }) =>
  Effect.map(
    call("POST", "/v1/oauth/token", {
      json: { grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret }
    }),
    (r) => r.body.access_token as string
  )

const runDue = Effect.flatMap(WebhookDispatcher, (d) => d.runDue)

describe("GET /v1/events", () => {
  it.scoped("lists every event newest first, its data as delivered, with where its deliveries stand", () =>
    Effect.gen(function*() {
      const ok = yield* receiver([200])
      const failing = yield* receiver([500])
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const good = yield* subscribe(access, ok.url, ["lab_result.received"])
      const bad = yield* subscribe(access, failing.url, ["transfer.arrived"])
      const lab = yield* simulate(access, linked.connection_id, "lab_result_received", { result: "fail" })
      yield* TestClock.adjust("1 second")
      const transfer = yield* simulate(access, linked.connection_id, "transfer_arrived")
      yield* TestClock.adjust("1 second")
      // nobody subscribed to this type: still an event, delivered to no endpoint
      const login = yield* simulate(access, linked.connection_id, "transfer_completed", { outcome: "received" })
      yield* runDue

      const page = yield* list(access)
      assert.deepStrictEqual(page.data.map((e) => e.id), [login.id, transfer.id, lab.id])
      assert.strictEqual(page.pagination.total, 3)
      const [l, t, r] = page.data
      assert.strictEqual(r!.type, "lab_result.received")
      assert.strictEqual(r!.connection_id, linked.connection_id)
      assert.deepStrictEqual(r!.data, lab.data, "the delivered body's data")
      assert.strictEqual(r!.created_at, new Date(T0).toISOString())
      assert.deepStrictEqual(r!.delivery, {
        status: "delivered",
        endpoints: [{ webhook_id: good.id, status: "succeeded", attempts: 1 }]
      })
      assert.strictEqual(t!.delivery.status, "pending", "a 500 is retried")
      assert.deepStrictEqual(t!.delivery.endpoints, [{ webhook_id: bad.id, status: "pending", attempts: 1 }])
      assert.deepStrictEqual(l!.delivery, { status: "delivered", endpoints: [] })

      const one = yield* call("GET", `/v1/events/${lab.id}`, { token: access })
      assert.strictEqual(one.status, 200)
      assert.deepStrictEqual(one.body.data, r)
    }).pipe(withApp()))

  it.scoped("filters by type, connection, time and delivery success, and pages", () =>
    Effect.gen(function*() {
      const failing = yield* receiver([500])
      const { access } = yield* signIn
      const a = yield* linkSandbox(access)
      const b = yield* linkSandbox(access, "provider_b")
      yield* subscribe(access, failing.url, ["transfer.arrived"])
      const first = yield* simulate(access, a.connection_id, "lab_result_received")
      yield* TestClock.adjust("20 minutes")
      const second = yield* simulate(access, b.connection_id, "transfer_arrived")
      yield* TestClock.adjust("20 minutes")
      const third = yield* simulate(access, a.connection_id, "lab_result_received")
      yield* runDue

      const ids = (p: { data: ReadonlyArray<{ id: string }> }) => p.data.map((e) => e.id)
      assert.deepStrictEqual(ids(yield* list(access, "?type=lab_result.received")), [third.id, first.id])
      assert.deepStrictEqual(ids(yield* list(access, `?connection_id=${b.connection_id}`)), [second.id])
      const from = new Date(T0 + 10 * 60_000).toISOString()
      const to = new Date(T0 + 30 * 60_000).toISOString()
      assert.deepStrictEqual(ids(yield* list(access, `?created[gte]=${from}&created[lte]=${to}`)), [second.id])
      assert.deepStrictEqual(ids(yield* list(access, `?created[gte]=${new Date(T0 + 40 * 60_000).toISOString()}`)), [
        third.id
      ])
      assert.deepStrictEqual(ids(yield* list(access, "?delivery_success=false")), [second.id])
      assert.deepStrictEqual(ids(yield* list(access, "?delivery_success=true")), [third.id, first.id])

      const p1 = yield* list(access, "?per_page=2")
      const p2 = yield* list(access, "?per_page=2&page=2")
      assert.deepStrictEqual([...ids(p1), ...ids(p2)], [third.id, second.id, first.id])
      assert.deepStrictEqual(p1.pagination, { page: 1, per_page: 2, total: 3, total_pages: 2 })
    }).pipe(withApp()))

  it.effect("refuses a bad filter in the contract's error shape", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      for (
        const [query, param] of [
          ["?type=transfer.lost", "type"],
          ["?created[gte]=yesterday", "created[gte]"],
          ["?delivery_success=maybe", "delivery_success"],
          ["?per_page=101", "per_page"],
          [`?created[gte]=${new Date(T0).toISOString()}&created[lte]=${new Date(T0 - 1).toISOString()}`, "created[gte]"]
        ] as const
      ) {
        const r = yield* call("GET", `/v1/events${query}`, { token: access })
        assert.strictEqual(r.status, 400, query)
        assert.strictEqual(r.body.error.type, "validation_error", query)
        assert.strictEqual(r.body.error.param, param, `${query}: ${JSON.stringify(r.body)}`)
      }
    }).pipe(withApp()))

  it.effect("another organisation sees none of them; a connection token sees its own connection's only", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const a = yield* linkSandbox(access)
      const b = yield* linkSandbox(access)
      const ofA = yield* simulate(access, a.connection_id, "lab_result_received")
      const ofB = yield* simulate(access, b.connection_id, "lab_result_received")

      const other = yield* otherOrganisation
      assert.deepStrictEqual((yield* list(other)).data, [])
      assert.strictEqual((yield* call("GET", `/v1/events/${ofA.id}`, { token: other })).status, 404)

      const tokenA = a.connection_token!
      assert.deepStrictEqual((yield* list(tokenA)).data.map((e) => e.id), [ofA.id])
      assert.strictEqual((yield* call("GET", `/v1/events/${ofA.id}`, { token: tokenA })).status, 200)
      const hidden = yield* call("GET", `/v1/events/${ofB.id}`, { token: tokenA })
      assert.strictEqual(hidden.status, 404)
      assert.strictEqual(hidden.body.error.code, "resource_not_found")
      const crossed = yield* call("GET", `/v1/events?connection_id=${b.connection_id}`, { token: tokenA })
      assert.strictEqual(crossed.status, 403)
      assert.strictEqual(crossed.body.error.type, "permission_error")
      assert.strictEqual((yield* call("GET", "/v1/events/evt_nope", { token: access })).status, 404)
      assert.strictEqual((yield* call("GET", "/v1/events")).status, 401)
    }).pipe(withApp()))
})

describe("events retention", () => {
  it.scoped("deletes the events past the retention with their deliveries, and keeps one still being delivered", () =>
    Effect.gen(function*() {
      const ok = yield* receiver([200])
      const failing = yield* receiver([500])
      const client = yield* signIn
      const { access } = client
      const linked = yield* linkSandbox(access)
      yield* subscribe(access, ok.url, ["lab_result.received"])
      yield* subscribe(access, failing.url, ["transfer.arrived"])
      const old = yield* simulate(access, linked.connection_id, "lab_result_received")
      const retrying = yield* simulate(access, linked.connection_id, "transfer_arrived")
      yield* runDue // the lab result is received; the transfer's first attempt fails and waits to retry
      yield* TestClock.adjust("20 days")
      const later = yield* renew(client)
      const recent = yield* simulate(later, linked.connection_id, "lab_result_received")
      yield* TestClock.adjust("11 days")

      const deleted = yield* Events.prune(30)
      assert.strictEqual(deleted, 1)
      assert.deepStrictEqual((yield* list(yield* renew(client))).data.map((e) => e.id), [recent.id, retrying.id])
      const store = yield* EventStore
      assert.deepStrictEqual(yield* store.deliveries([old.id]), [], "its deliveries went with it")
    }).pipe(withApp()))
})
