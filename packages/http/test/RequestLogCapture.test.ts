/**
 * The request log end to end (issue #33), through the real API layer on SQLite: a `/v1` request
 * is logged with its route template, status, error code, request id, principal and connection,
 * and the upstream calls it made through the real adapters to the in-process emulator (a sandbox
 * fault shows as Metrc's 401 or BioTrack's errorcode); bodies are stored redacted, so that no
 * secret is anywhere in the database file; a full queue drops and counts without slowing a
 * request; old entries are pruned.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Jobs } from "@tracebridge/sync"
import { ConfigProvider, Deferred, Duration, Effect, Either, Fiber, Layer, Option, Redacted } from "effect"
import * as TestClock from "effect/TestClock"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as MetricsServer from "../src/MetricsServer.js"
import { Accounts } from "../src/persistence/Accounts.js"
import * as Database from "../src/persistence/Database.js"
import { RequestLogStore } from "../src/persistence/RequestLogStore.js"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import * as Crypto from "../src/services/Crypto.js"
import * as RequestLog from "../src/services/RequestLog.js"
import { call, type Json, linkSandbox, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** Runs a request while the TestClock moves on in steps, so that retries and timeouts elapse. */
const settle = <E, R>(request: Effect.Effect<Json, E, R>) =>
  Effect.gen(function*() {
    const fiber = yield* Effect.fork(request)
    for (let step = 0; step < 400; step++) {
      const done = yield* Fiber.poll(fiber)
      if (Option.isSome(done)) break
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 2)))
      yield* TestClock.adjust("1 second")
    }
    return yield* Fiber.join(fiber)
  })

/** Waits until every record so far is written. */
const flush = Effect.flatMap(
  Effect.serviceOption(RequestLogCapture.Capture),
  (capture) => Option.isSome(capture) ? capture.value.flush : Effect.dieMessage("the request log is off")
)

const organisationOf = (clientId: string) =>
  Effect.map(
    Effect.flatMap(Accounts, (accounts) => accounts.getClient(clientId)),
    (c) => Option.getOrThrow(c).organisation_id
  )

/** The logged entry of a response (by its `X-Request-Id`). */
const entryOf = (organisationId: string, answer: Json) =>
  Effect.gen(function*() {
    yield* flush
    const log = yield* RequestLog.RequestLog
    const id = answer.headers["x-request-id"]!
    assert.isString(id)
    const found = yield* log.get(organisationId, id)
    assert.isTrue(Option.isSome(found), `no entry for ${id}`)
    return Option.getOrThrow(found)
  })

const packagesPath = (access: string, connection: string) =>
  Effect.gen(function*() {
    const facilities = yield* call("GET", `/v1/connections/${connection}/facilities`, { token: access })
    assert.strictEqual(facilities.status, 200)
    return `/v1/connections/${connection}/facilities/${facilities.body.data[0].id}/packages?per_page=5`
  })

/** The whole service on a test server, on SQLite in a temporary file (its services in the layer's type). */
const TestApp = Http.makeHttpLive().pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

const PACKAGES_ROUTE = "/v1/connections/:connection_id/facilities/:facility_id/packages"

describe("request log", () => {
  it.effect("a failing read through provider_a's expired login: the entry and Metrc's 401 upstream", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const organisation = yield* organisationOf(me.client_id)
      const conn = yield* linkSandbox(me.access)
      const packages = yield* packagesPath(me.access, conn.connection_id)
      const ok = yield* settle(call("GET", packages, { token: me.access }))
      assert.strictEqual(ok.status, 200)
      const fault = yield* call("PUT", `/v1/sandbox/${conn.connection_id}/faults`, {
        token: me.access,
        json: { kind: "expired_login" }
      })
      assert.strictEqual(fault.status, 200)
      const failed = yield* settle(call("GET", packages, { token: me.access }))
      assert.strictEqual(failed.status, 409)

      const { calls, entry } = yield* entryOf(organisation, failed)
      assert.strictEqual(entry.request_id, failed.headers["x-request-id"])
      assert.strictEqual(entry.request_id, failed.body.error.request_id)
      assert.strictEqual(entry.organisation_id, organisation)
      assert.strictEqual(entry.method, "GET")
      assert.strictEqual(entry.route, PACKAGES_ROUTE)
      assert.strictEqual(entry.path, packages)
      assert.strictEqual(entry.status, 409)
      assert.strictEqual(entry.status_class, "4xx")
      assert.strictEqual(entry.error_code, "connection_login_required")
      assert.strictEqual(entry.principal, me.client_id)
      assert.strictEqual(entry.connection_id, conn.connection_id)
      assert.isAbove(entry.duration_ms, 0)
      assert.isNull(entry.request_body)
      assert.deepStrictEqual(JSON.parse(entry.error_body!), failed.body)
      assert.strictEqual(entry.upstream_calls, calls.length)
      const refused = calls.find((c) => c.status === 401)
      assert.isDefined(refused, JSON.stringify(calls))
      assert.strictEqual(refused!.provider, "provider_a")
      assert.strictEqual(refused!.state, "CO")
      assert.strictEqual(refused!.method, "GET")
      assert.isString(refused!.operation)
      assert.match(refused!.path, /^\/provider_a\/CO\//)
      assert.strictEqual(refused!.attempt, 1)
      assert.isFalse(refused!.rate_limited)
      assert.isNull(refused!.failure)

      // the list finds it by each filter
      const log = yield* RequestLog.RequestLog
      const ids = (page: RequestLog.Page) => page.items.map((i) => i.request_id)
      assert.include(ids(yield* log.list(organisation, { status_class: "4xx" }, undefined, 100)), entry.request_id)
      assert.notInclude(ids(yield* log.list(organisation, { status_class: "2xx" }, undefined, 100)), entry.request_id)
      assert.include(ids(yield* log.list(organisation, { route: PACKAGES_ROUTE }, undefined, 100)), entry.request_id)
      assert.include(
        ids(yield* log.list(organisation, { connection_id: conn.connection_id }, undefined, 100)),
        entry.request_id
      )
      const success = yield* entryOf(organisation, ok)
      assert.strictEqual(success.entry.status, 200)
      assert.isNull(success.entry.error_code)
      assert.isNull(success.entry.error_body)
    }).pipe(Effect.provide(TestApp)))

  it.effect("a failing read through provider_b's expired login: BioTrack's errorcode 63 on the upstream call", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const organisation = yield* organisationOf(me.client_id)
      const conn = yield* linkSandbox(me.access, "provider_b", "HI")
      const packages = yield* packagesPath(me.access, conn.connection_id)
      yield* call("PUT", `/v1/sandbox/${conn.connection_id}/faults`, {
        token: me.access,
        json: { kind: "expired_login" }
      })
      const failed = yield* settle(call("GET", packages, { token: me.access }))
      assert.strictEqual(failed.status, 409, JSON.stringify(failed.body))
      const { calls, entry } = yield* entryOf(organisation, failed)
      assert.strictEqual(entry.error_code, "connection_login_required")
      assert.strictEqual(entry.route, PACKAGES_ROUTE)
      const expired = calls.find((c) => c.error_code === "63")
      assert.isDefined(expired, JSON.stringify(calls))
      assert.strictEqual(expired!.provider, "provider_b")
      assert.strictEqual(expired!.state, "HI")
      assert.strictEqual(expired!.method, "POST")
      assert.strictEqual(expired!.status, 200)
      // no BioTrack login or session id in what is stored of the calls
      for (const c of calls) assert.notMatch(JSON.stringify(c), /pass_good|user_good|sessionid/)
    }).pipe(Effect.provide(TestApp)))

  it.effect("a rate-limited state system: each 429 and retry is a call of its own, with its attempt", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const organisation = yield* organisationOf(me.client_id)
      const conn = yield* linkSandbox(me.access)
      const packages = yield* packagesPath(me.access, conn.connection_id)
      yield* call("PUT", `/v1/sandbox/${conn.connection_id}/faults`, {
        token: me.access,
        json: { kind: "rate_limited", retry_after: 1 }
      })
      const limited = yield* settle(call("GET", packages, { token: me.access }))
      assert.strictEqual(limited.status, 503, JSON.stringify(limited.body))
      const { calls, entry } = yield* entryOf(organisation, limited)
      assert.strictEqual(entry.error_code, "provider_rate_limited")
      const throttled = calls.filter((c) => c.status === 429)
      assert.isAtLeast(throttled.length, 2, JSON.stringify(calls))
      assert.deepStrictEqual(throttled.map((c) => c.attempt), throttled.map((_, i) => i + 1))
      for (const c of throttled) {
        assert.isTrue(c.rate_limited)
        assert.strictEqual(c.path, throttled[0]!.path)
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("on shutdown the queue is written out", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-request-log-"))
      const file = path.join(dir, Database.sqliteFileName)
      const app = Http.makeHttpLive().pipe(
        Layer.provideMerge(Server.layerTest),
        Layer.provideMerge(Crypto.layerTest),
        Layer.provideMerge(Layer.orDie(Database.layerSqlite(file)))
      )
      const sent = yield* Effect.gen(function*() {
        const me = yield* signIn
        const organisation = yield* organisationOf(me.client_id)
        const answers: Array<string> = []
        for (let i = 0; i < 20; i++) {
          const answer = yield* call("GET", `/v1/connections/conn_${i}`, { token: me.access })
          answers.push(answer.headers["x-request-id"]!)
        }
        // no flush: the layer's release writes the queue out
        return { organisation, answers }
      }).pipe(Effect.provide(app))
      const stored = yield* Effect.gen(function*() {
        const log = yield* RequestLog.RequestLog
        return (yield* log.list(sent.organisation, { route: "/v1/connections/:connection_id" }, undefined, 100)).items
      }).pipe(
        Effect.provide(RequestLog.layer.pipe(Layer.provide(Layer.orDie(Database.layerSqlite(file))))),
        Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      )
      assert.sameMembers(stored.map((e) => e.request_id), sent.answers)
    }))

  it.effect("bodies are stored redacted: no secret or token is anywhere in the database file", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-request-log-"))
      const file = path.join(dir, Database.sqliteFileName)
      const password = "Zq8-unique-sandbox-password-Xk2"
      yield* Effect.gen(function*() {
        const me = yield* signIn
        const organisation = yield* organisationOf(me.client_id)
        // a login in the body (secret by name), and an access token where no secret is expected (by value)
        const refused = yield* call("POST", "/v1/sandbox/public_token/create", {
          token: me.access,
          json: {
            provider: "provider_b",
            state: "HI",
            credentials: { ubi: "000000000", username: "user_good", password }
          }
        })
        const created = yield* call("POST", "/v1/sandbox/public_token/create", {
          token: me.access,
          json: { provider: "provider_b", state: "HI" }
        })
        assert.strictEqual(created.status, 200, JSON.stringify(created.body))
        // refused (not a URL), so that nothing but the log keeps its body
        const link = yield* call("POST", "/v1/webhooks", {
          token: me.access,
          json: { url: "not a url", events: ["transfer.arrived"], description: me.access }
        })
        assert.strictEqual(link.status, 400)
        const exchanged = yield* call("POST", "/v1/link/token/exchange", {
          token: me.access,
          json: { public_token: created.body.data.public_token }
        })
        yield* flush
        const stored = yield* entryOf(organisation, refused)
        assert.strictEqual(stored.entry.route, "/v1/sandbox/public_token/create")
        assert.deepStrictEqual(JSON.parse(stored.entry.request_body!), {
          provider: "provider_b",
          state: "HI",
          credentials: "[REDACTED]"
        })
        // a body past the kept length is not kept, and says so (strings under the 10,000 limit)
        const long = yield* call("POST", "/v1/webhooks", {
          token: me.access,
          json: {
            url: "not a url",
            events: ["transfer.arrived"],
            description: "x".repeat(9_000),
            more: ["a", "b", "c", "d"].map((c) => c.repeat(9_000))
          }
        })
        assert.strictEqual(long.status, 400)
        const longEntry = yield* entryOf(organisation, long)
        assert.isNull(longEntry.entry.request_body)
        assert.isTrue(longEntry.entry.request_body_truncated)
        const linked = yield* entryOf(organisation, link)
        assert.include(linked.entry.request_body!, "tb_at_[REDACTED]")
        const exchange = yield* entryOf(organisation, exchanged)
        assert.include(exchange.entry.request_body!, "[REDACTED]")
        // the token request: its client's organisation, its secret redacted
        const log = yield* RequestLog.RequestLog
        const tokenCalls = yield* log.list(organisation, { route: "/v1/oauth/token" }, undefined, 10)
        assert.strictEqual(tokenCalls.items.length, 1)
        assert.strictEqual(tokenCalls.items[0]!.principal, me.client_id)
        const tokenEntry = Option.getOrThrow(yield* log.get(organisation, tokenCalls.items[0]!.request_id))
        assert.strictEqual(JSON.parse(tokenEntry.entry.request_body!).client_secret, "[REDACTED]")

        const secrets = [password, me.client_secret, me.access, me.refresh, created.body.data.public_token]
        const bytes = ["", "-wal"].map((suffix) =>
          fs.existsSync(`${file}${suffix}`) ? fs.readFileSync(`${file}${suffix}`).toString("latin1") : ""
        ).join("")
        assert.include(bytes, "request_log")
        for (const secret of secrets) {
          assert.isString(secret)
          const at = bytes.indexOf(secret.slice(-20))
          assert.strictEqual(
            at,
            -1,
            `secret ${secrets.indexOf(secret)} is in the database file: ${
              JSON.stringify(bytes.slice(Math.max(0, at - 300), at + 60))
            }`
          )
        }
      }).pipe(
        Effect.provide(
          Http.makeHttpLive().pipe(
            Layer.provideMerge(Server.layerTest),
            Layer.provideMerge(Crypto.layerTest),
            Layer.provideMerge(Layer.orDie(Database.layerSqlite(file)))
          )
        ),
        Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true })))
      )
    }))

  it.effect(
    "a full queue behind a blocked writer: requests answer at once, drops are counted",
    () =>
      Effect.gen(function*() {
        const release = yield* Deferred.make<void>()
        const written = { batches: 0 }
        const BlockedStore = Layer.effect(
          RequestLogStore,
          Effect.map(RequestLogStore, (store) => ({
            ...store,
            insertBatch: (batch) =>
              Effect.zipRight(
                Effect.zipRight(Effect.sync(() => written.batches++), Deferred.await(release)),
                store.insertBatch(batch)
              )
          }))
        )
        const token = "metrics-token-0123456789"
        const app = Http.makeHttpLive({
          requestLog: { enabled: true, days: 14, queueSize: 2 },
          metrics: { ...MetricsServer.off, token: Option.some(Redacted.make(token)) }
        }).pipe(
          Layer.provide(BlockedStore),
          Layer.provideMerge(Server.layerTest),
          Layer.provideMerge(Crypto.layerTest),
          Layer.provideMerge(Layer.orDie(Database.layerSqlite(":memory:")))
        )
        yield* Effect.gen(function*() {
          const me = yield* signIn
          const capture = Option.getOrThrow(yield* Effect.serviceOption(RequestLogCapture.Capture))
          yield* Effect.log("signed in")
          const before = capture.dropped()
          const started = performance.now()
          for (let i = 0; i < 30; i++) {
            const answer = yield* call("GET", "/v1/connections/conn_none", { token: me.access })
            assert.strictEqual(answer.status, 404)
          }
          const took = performance.now() - started
          // the writer holds a batch (its first record and what the queue held after its pause), the queue two more: the rest were dropped, not waited for
          assert.isAtLeast(capture.dropped() - before, 24)
          assert.isBelow(took, 10_000)
          // the writer took its first batch and is held there: no second one
          for (let i = 0; i < 100 && written.batches === 0; i++) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
          }
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
          assert.strictEqual(written.batches, 1)
          const scraped = yield* Effect.flatMap(
            HttpClient.HttpClient,
            (client) => client.execute(HttpClientRequest.get("/metrics").pipe(HttpClientRequest.bearerToken(token)))
          ).pipe(Effect.flatMap((r) => r.text), Effect.scoped)
          const counted = /^tracebridge_request_log_dropped_total\{[^}]*reason="queue_full"[^}]*\} (\d+)/m.exec(scraped)
          assert.isNotNull(counted, scraped)
          assert.isAtLeast(Number(counted![1]), 24)
          yield* Deferred.succeed(release, undefined)
          yield* capture.flush
        }).pipe(
          Effect.ensuring(Deferred.succeed(release, undefined)),
          Effect.provide(app),
          Effect.timeout(Duration.seconds(60))
        )
      }),
    { timeout: 90_000 }
  )

  it.live("a sync a request starts is not the request's: its upstream calls are not in the request's entry", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access })
      assert.strictEqual(facilities.status, 200)
      const ids = (facilities.body.data as Array<{ id: string }>).map((f) => f.id)
      // a request's record, still open (its answer not ready), while it starts the backfills
      const record = new RequestLogCapture.Pending(0, 0, "GET", `/v1/connections/${conn.connection_id}/sync`, undefined)
      const jobs = yield* Jobs.Jobs
      yield* Effect.locally(jobs.start(conn.connection_id, ids), RequestLogCapture.current, record)
      // the backfills run in the background, through the in-process emulator: wait until they have stored objects
      let stored = 0
      for (let i = 0; i < 600 && stored === 0; i++) {
        const status = yield* call("GET", `/v1/connections/${conn.connection_id}/sync`, { token: me.access })
        assert.strictEqual(status.status, 200, JSON.stringify(status.body))
        for (const f of status.body.data.facilities as Array<{ resources: Array<{ count: number }> }>) {
          for (const r of f.resources) stored += r.count
        }
        if (stored === 0) yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      }
      assert.isAbove(stored, 0, "the backfill stored nothing")
      assert.deepStrictEqual(record.calls.map((c) => c.url), [])
    }).pipe(Effect.provide(TestApp)))

  it.effect("TRACEBRIDGE_REQUEST_LOG=off captures nothing; the settings are validated", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.either(Effect.withConfigProvider(RequestLogCapture.config, ConfigProvider.fromJson(env)))
      assert.deepStrictEqual(yield* read({}), Either.right({ enabled: true, days: 14, queueSize: 10_000 }))
      assert.deepStrictEqual(
        yield* read({ TRACEBRIDGE_REQUEST_LOG: "off", TRACEBRIDGE_REQUEST_LOG_DAYS: "30" }),
        Either.right({ enabled: false, days: 30, queueSize: 10_000 })
      )
      for (
        const bad of [
          { TRACEBRIDGE_REQUEST_LOG: "yes" },
          { TRACEBRIDGE_REQUEST_LOG_DAYS: "0" },
          { TRACEBRIDGE_REQUEST_LOG_DAYS: "366" },
          { TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE: "0" }
        ]
      ) {
        const refused = yield* read(bad)
        assert.isTrue(Either.isLeft(refused), JSON.stringify(bad))
        assert.include(String(Either.isLeft(refused) ? refused.left : ""), Object.keys(bad)[0]!)
      }

      const off = Http.makeHttpLive({ requestLog: { enabled: false, days: 14, queueSize: 10 } }).pipe(
        Layer.provideMerge(Server.layerTest),
        Layer.provideMerge(Crypto.layerTest),
        Layer.provideMerge(TestDatabase.layer)
      )
      yield* Effect.gen(function*() {
        const me = yield* signIn
        const organisation = yield* organisationOf(me.client_id)
        assert.isTrue(Option.isNone(yield* Effect.serviceOption(RequestLogCapture.Capture)))
        const answer = yield* call("GET", "/v1/connections/conn_none", { token: me.access })
        assert.strictEqual(answer.status, 404)
        const log = yield* RequestLog.RequestLog
        assert.deepStrictEqual((yield* log.list(organisation, {}, undefined, 100)).items, [])
      }).pipe(Effect.provide(off))
    }))

  it.effect("the retention job prunes entries older than the days, at once and then every hour", () =>
    Effect.gen(function*() {
      const store = yield* RequestLogStore
      const log = yield* RequestLog.RequestLog
      const day = 86_400_000
      const now = Date.UTC(2026, 0, 20)
      yield* TestClock.setTime(now)
      const entry = (id: string, at: number) => ({
        entry: {
          request_id: id,
          organisation_id: "org_a",
          at,
          method: "GET",
          route: "/v1/webhooks",
          path: "/v1/webhooks",
          status: 200,
          status_class: "2xx",
          duration_ms: 1,
          principal: "tb_client_a",
          connection_id: null,
          error_code: null,
          request_body: null,
          request_body_truncated: false,
          error_body: null,
          upstream_calls: 0
        },
        calls: []
      })
      yield* store.insertBatch([
        entry("req_15_days", now - 15 * day),
        entry("req_14_days_less_a_minute", now - 14 * day + 60_000),
        entry("req_1_day", now - day)
      ])
      const ids = Effect.map(log.list("org_a", {}, undefined, 100), (page) => page.items.map((i) => i.request_id))
      const job = yield* Effect.fork(RequestLogCapture.pruneJob(14))
      // the first prune runs at once
      yield* TestClock.adjust(Duration.millis(1))
      for (let i = 0; i < 50 && (yield* ids).includes("req_15_days"); i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
      assert.deepStrictEqual(yield* ids, ["req_1_day", "req_14_days_less_a_minute"])
      // an hour later the next: the entry now past 14 days goes
      yield* TestClock.adjust(RequestLogCapture.PRUNE_EVERY)
      for (let i = 0; i < 50 && (yield* ids).length > 1; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
      assert.deepStrictEqual(yield* ids, ["req_1_day"])
      yield* Fiber.interrupt(job)
    }).pipe(Effect.provide(RequestLog.layer.pipe(Layer.provideMerge(Layer.orDie(Database.layerSqlite(":memory:")))))))
})
