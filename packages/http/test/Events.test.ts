/**
 * The events API (issue #34, DECISIONS "Events"): `GET /v1/events` lists what the organisation's
 * webhooks were sent, newest first, with each event's delivery summary, filtered by type,
 * connection, time and delivery success, and scoped by organisation and connection token;
 * `GET /v1/events/{event_id}` returns one; events past the retention are deleted. The worker is off:
 * deliveries are driven with `runDue`.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import type { Http } from "@tracebridge/http"
import { ConfigProvider, Effect, Stream, TestClock } from "effect"
import { Accounts } from "../src/persistence/Accounts.js"
import { EventStore } from "../src/persistence/EventStore.js"
import { Readiness } from "../src/Readiness.js"
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
            endpoints: ReadonlyArray<{ webhook_id: string; delivery_id: string; status: string; attempts: number }>
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
        endpoints: [{
          webhook_id: good.id,
          delivery_id: r!.delivery.endpoints[0]!.delivery_id,
          status: "succeeded",
          attempts: 1
        }]
      })
      assert.match(r!.delivery.endpoints[0]!.delivery_id, /^whd_/)
      assert.strictEqual(t!.delivery.status, "pending", "a 500 is retried")
      assert.deepStrictEqual(t!.delivery.endpoints.map(({ delivery_id: _, ...rest }) => rest), [
        { webhook_id: bad.id, status: "pending", attempts: 1 }
      ])
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

interface Frame {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly comment?: string
}

/** Opens `GET /v1/events/stream` and collects its frames until the scope closes. */
const openStream = (token: string, query = "", lastEventId?: string) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const frames: Array<Frame> = []
    const request = HttpClientRequest.get(`/v1/events/stream${query}`).pipe(
      HttpClientRequest.bearerToken(token),
      HttpClientRequest.setHeaders(lastEventId === undefined ? {} : { "last-event-id": lastEventId })
    )
    const response = yield* client.execute(request)
    const state = { status: response.status, contentType: response.headers["content-type"], ended: false }
    let buffer = ""
    yield* response.stream.pipe(
      Stream.decodeText(),
      Stream.runForEach((chunk) =>
        Effect.sync(() => {
          buffer += chunk
          let end: number
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const frame: Record<string, string> = {}
            for (const line of block.split("\n")) {
              if (line.startsWith(":")) frame.comment = line.slice(1).trim()
              else {
                const colon = line.indexOf(":")
                frame[line.slice(0, colon)] = line.slice(colon + 1).trim()
              }
            }
            frames.push(frame)
          }
        })
      ),
      Effect.ensuring(Effect.sync(() => (state.ended = true))),
      Effect.forkScoped
    )
    return { frames, state, events: () => frames.filter((f) => f.id !== undefined) }
  })

/** Waits (real time) until `check` holds, for at most `ms`. */
const eventually = (what: string, check: () => boolean, ms = 10_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    while (!check()) {
      if (Date.now() - started > ms) return yield* Effect.die(new Error(`timed out waiting for ${what}`))
      yield* Effect.sleep("20 millis")
    }
  })

const liveApp = <A, E, R>(program: Effect.Effect<A, E, R>) =>
  Effect.provide(program, webhookApp()).pipe(
    Effect.withConfigProvider(
      ConfigProvider.fromMap(new Map([["TRACEBRIDGE_EVENT_STREAM_HEARTBEAT_SECONDS", "1"]])).pipe(
        ConfigProvider.orElse(() => ConfigProvider.fromEnv())
      )
    )
  )

describe("GET /v1/events/stream", () => {
  it.live(
    "sends each new event as it is stored, its delivery body as data, with heartbeats",
    () =>
      Effect.gen(function*() {
        const { access } = yield* signIn
        const linked = yield* linkSandbox(access)
        const stream = yield* openStream(access)
        assert.strictEqual(stream.state.status, 200)
        assert.strictEqual(stream.state.contentType, "text/event-stream")
        yield* eventually("the stream open", () => stream.frames.some((f) => f.comment === "connected"))
        const lab = yield* simulate(access, linked.connection_id, "lab_result_received")
        const transfer = yield* simulate(access, linked.connection_id, "transfer_arrived")
        yield* eventually("both events", () => stream.events().length === 2)
        const [first, second] = stream.events()
        assert.deepStrictEqual([first!.id, first!.event], [lab.id, "lab_result.received"])
        assert.deepStrictEqual([second!.id, second!.event], [transfer.id, "transfer.arrived"])
        assert.deepStrictEqual(JSON.parse(first!.data!), lab, "the delivery body")
        yield* eventually("a heartbeat", () => stream.frames.some((f) => f.comment === "heartbeat"), 5_000)
      }).pipe(Effect.scoped, liveApp),
    30_000
  )

  it.live("resumes after Last-Event-ID: nothing stored in between is lost", () =>
    Effect.gen(function*() {
      const { access } = yield* signIn
      const linked = yield* linkSandbox(access)
      const before = yield* simulate(access, linked.connection_id, "lab_result_received")
      const seen = yield* Effect.scoped(Effect.gen(function*() {
        const stream = yield* openStream(access, "", before.id)
        const one = yield* simulate(access, linked.connection_id, "transfer_arrived")
        yield* eventually("the first event", () => stream.events().some((f) => f.id === one.id))
        return one
      }))
      // the stream is closed: these are stored while nobody listens
      const missed = [
        yield* simulate(access, linked.connection_id, "lab_result_received"),
        yield* simulate(access, linked.connection_id, "transfer_completed", { outcome: "received" })
      ]
      const resumed = yield* openStream(access, "", seen.id)
      yield* eventually("the missed events", () => missed.every((m) => resumed.events().some((f) => f.id === m.id)))
      const ids = resumed.events().map((f) => f.id)
      assert.strictEqual(new Set(ids).size, ids.length, "no repeat within one connection")
    }).pipe(Effect.scoped, liveApp), 30_000)

  it.live(
    "filters by type and connection; a connection token streams its own connection only",
    () =>
      Effect.gen(function*() {
        const { access } = yield* signIn
        const a = yield* linkSandbox(access)
        const b = yield* linkSandbox(access)
        const labs = yield* openStream(access, "?types=lab_result.received")
        const ofB = yield* openStream(access, `?connection_id=${b.connection_id}`)
        const tokenA = yield* openStream(a.connection_token!)
        yield* eventually(
          "three streams open",
          () => [labs, ofB, tokenA].every((s) => s.frames.some((f) => f.comment === "connected"))
        )
        const labA = yield* simulate(access, a.connection_id, "lab_result_received")
        const transferB = yield* simulate(access, b.connection_id, "transfer_arrived")
        const labB = yield* simulate(access, b.connection_id, "lab_result_received")
        yield* eventually("the filtered events", () => labs.events().length === 2 && ofB.events().length === 2)
        yield* Effect.sleep("1200 millis") // a poll more: nothing else comes
        assert.deepStrictEqual(labs.events().map((f) => f.id), [labA.id, labB.id])
        assert.deepStrictEqual(ofB.events().map((f) => f.id), [transferB.id, labB.id])
        assert.deepStrictEqual(tokenA.events().map((f) => f.id), [labA.id])

        const crossed = yield* call("GET", `/v1/events/stream?connection_id=${b.connection_id}`, {
          token: a.connection_token!
        })
        assert.strictEqual(crossed.status, 403)
        const bad = yield* call("GET", "/v1/events/stream?types=lab_result.received,transfer.lost", { token: access })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(bad.body.error.param, "types")
        assert.strictEqual((yield* call("GET", "/v1/events/stream")).status, 401)
      }).pipe(Effect.scoped, liveApp),
    30_000
  )
})

describe("GET /v1/events/stream ends", () => {
  it.live("when the node drains, and when its token's client is revoked", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const revoked = yield* openStream(me.access)
      const other = yield* otherOrganisation
      const draining = yield* openStream(other)
      yield* eventually("both open", () =>
        [revoked, draining].every((s) => s.frames.some((f) => f.comment === "connected")))

      yield* (yield* Accounts).revokeClient(me.client_id, Date.now())
      yield* eventually("the revoked client's stream ended", () =>
        revoked.state.ended, 5_000)
      assert.isFalse(draining.state.ended)

      yield* (yield* Readiness).drain
      yield* eventually("the stream ended on drain", () => draining.state.ended, 5_000)
    }).pipe(Effect.scoped, liveApp), 30_000)
})
