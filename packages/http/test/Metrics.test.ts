/**
 * The metrics of issue #32 on an in-process server: their names and bounded labels after a
 * scripted session (no id in any label), the bearer token on the main port, and nothing at all
 * by default.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { UpstreamGovernor } from "@tracebridge/core"
import { Http, Server } from "@tracebridge/http"
import { SyncStore } from "@tracebridge/sync"
import { ConfigProvider, Effect, Layer, Option, Redacted } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as Metrics from "../src/Metrics.js"
import * as MetricsServer from "../src/MetricsServer.js"
import * as Readiness from "../src/Readiness.js"
import * as Routes from "../src/Routes.js"
import * as Crypto from "../src/services/Crypto.js"
import { Providers } from "../src/services/Providers.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"
import { tracesTo } from "./support/TraceCollector.js"

const TOKEN = "metrics-token-0123456789abcdef"

/** The served API on a test server and database, with `options`. */
const appWith = (options: Http.Options) =>
  Http.makeHttpLive(options).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.layer)
  )

/** The metrics on the main port, behind {@link TOKEN}. */
const tokenMetrics = { ...MetricsServer.off, token: Option.some(Redacted.make(TOKEN)) }

const withToken = appWith({ metrics: tokenMetrics })

const scrape = (token: string | undefined) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.get("/metrics")
    if (token !== undefined) request = HttpClientRequest.bearerToken(request, token)
    const response = yield* client.execute(request)
    return { status: response.status, text: yield* response.text }
  }).pipe(Effect.scoped)

/** Every sample line's name and labels. */
const samples = (text: string) =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#")).map((line) => {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (.+)$/.exec(line)
    assert.isNotNull(match, `not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const pair of (match![2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1]!] = pair[2]!
    }
    return { name: match![1]!, labels, value: Number(match![3]) }
  })

/** A signed-in caller, a linked sandbox connection and its first facility. */
const linkedFacility = Effect.gen(function*() {
  const me = yield* signIn
  const conn = yield* linkSandbox(me.access)
  const facilities = yield* call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access })
  return { conn, facility: facilities.body.data[0].id as string, me }
})

// One after another: recording is on while any metrics layer is up, for the whole process.
describe.sequential("Metrics", () => {
  it("route labels are the contract's templates, status classes are bounded", () => {
    assert.strictEqual(Metrics.routeOf("/v1/connections/conn_123?x=1"), Routes.template("/v1/connections/conn_123"))
    assert.include(Metrics.routeOf("/v1/connections/conn_123"), ":")
    assert.notInclude(Metrics.routeOf("/v1/connections/conn_123"), "conn_123")
    assert.strictEqual(Metrics.routeOf("/no/such/path/abc"), "unmatched")
    assert.strictEqual(Metrics.routeOf("/docs/x"), "/docs")
    assert.strictEqual(Metrics.routeOf("/mcp"), "/mcp")
    assert.strictEqual(Metrics.statusClass(204), "2xx")
    assert.strictEqual(Metrics.statusClass(503), "5xx")
  })

  it("compares the token as a whole bearer token", () => {
    const token = Redacted.make(TOKEN)
    assert.isTrue(MetricsServer.authorized(`Bearer ${TOKEN}`, token))
    assert.isTrue(MetricsServer.authorized(`bearer ${TOKEN}`, token))
    assert.isFalse(MetricsServer.authorized(`Bearer ${TOKEN}x`, token))
    assert.isFalse(MetricsServer.authorized(`Bearer ${TOKEN.slice(0, -1)}`, token))
    assert.isFalse(MetricsServer.authorized(TOKEN, token))
    assert.isFalse(MetricsServer.authorized(undefined, token))
  })

  it.effect("off by default: /metrics is a 404 like any unknown path, and nothing is recorded", () =>
    Effect.gen(function*() {
      const answer = yield* call("GET", "/metrics")
      assert.strictEqual(answer.status, 404)
      assert.strictEqual(answer.body.error.code, "resource_not_found")
      assert.isFalse(Metrics.isOn())
      const withTokenToo = yield* call("GET", "/metrics", { token: TOKEN })
      assert.strictEqual(withTokenToo.status, 404)
    }).pipe(Effect.provide(TestApp)))

  it.effect("on the main port: 401 without or with a wrong token, the metrics with it", () =>
    Effect.gen(function*() {
      assert.isTrue(Metrics.isOn())
      const none = yield* call("GET", "/metrics")
      assert.strictEqual(none.status, 401)
      assert.strictEqual(none.body.error.type, "authentication_error")
      assert.strictEqual(none.body.error.code, "unauthorized")
      assert.isString(none.body.error.request_id)
      const wrong = yield* call("GET", "/metrics", { token: `${TOKEN}-wrong` })
      assert.strictEqual(wrong.status, 401)
      assert.strictEqual(wrong.body.error.type, "authentication_error")
      const right = yield* scrape(TOKEN)
      assert.strictEqual(right.status, 200)
      assert.include(right.text, "# TYPE tracebridge_http_requests_total counter")
      const document = yield* call("GET", "/v1/openapi.json")
      assert.property(document.body.paths, "/v1/connections")
      assert.notProperty(document.body.paths, "/metrics")
    }).pipe(Effect.provide(withToken), Effect.tap(() => assert.isFalse(Metrics.isOn()))))

  it.live("a governor wait is timed by provider; a failed sync read and a takeover are counted", () =>
    Effect.gen(function*() {
      const value = (text: string, name: string, labels: Record<string, string> = {}) =>
        samples(text).find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v))
          ?.value ?? 0
      const before = (yield* scrape(TOKEN)).text

      // two tokens of a bucket at 20 a second: the second waits ~50 ms
      const governor = Metrics.governor(yield* UpstreamGovernor.makeMemory)
      const key = UpstreamGovernor.key({ provider: "provider_a", vendorKeyFingerprint: "f00d", licence: "LIC-1" })
      yield* governor.take(key, { requestsPerSecond: 20 })
      yield* governor.take(key, { requestsPerSecond: 20 })

      const store = Metrics.syncStore(yield* SyncStore.SyncStore)
      const now = Date.now()
      const facility = yield* store.ensureFacility("conn_metrics", "fac_metrics", now - 60_000)
      assert.strictEqual(facility.status, "backfilling")
      yield* store.updateFacility("conn_metrics", "fac_metrics", { last_error: "provider_a answered 503" })
      const taken = yield* store.claimStalled(now, now, 10)
      assert.deepStrictEqual(taken.map((f) => f.facility_id), ["fac_metrics"])

      const after = (yield* scrape(TOKEN)).text
      const waits = "tracebridge_upstream_governor_wait_seconds_count"
      assert.strictEqual(
        value(after, waits, { provider: "provider_a" }) - value(before, waits, { provider: "provider_a" }),
        2
      )
      const waited = "tracebridge_upstream_governor_wait_seconds_sum"
      assert.isAtLeast(
        value(after, waited, { provider: "provider_a" }) - value(before, waited, { provider: "provider_a" }),
        0.03
      )
      const failures = "tracebridge_sync_poll_failures_total"
      assert.strictEqual(value(after, failures) - value(before, failures), 1)
      const takeovers = "tracebridge_sync_takeovers_total"
      assert.strictEqual(value(after, takeovers) - value(before, takeovers), 1)
    }).pipe(Effect.provide(withToken)))

  it.effect("tracebridge_ready is 1 while /readyz answers 200 and 0 once the node drains", () =>
    Effect.gen(function*() {
      const ready = (text: string) => samples(text).find((x) => x.name === "tracebridge_ready")?.value
      assert.strictEqual((yield* call("GET", "/readyz")).status, 200)
      assert.strictEqual(ready((yield* scrape(TOKEN)).text), 1)
      yield* Effect.flatMap(Readiness.Readiness, (r) => r.drain)
      const readyz = yield* call("GET", "/readyz")
      assert.strictEqual(readyz.status, 503)
      assert.strictEqual(ready((yield* scrape(TOKEN)).text), 0, "the scrape sees the node /readyz sees")
    }).pipe(Effect.provide(withToken)))

  it.effect("after a scripted session: the names and labels, and no id in any label", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const conn = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access })
      assert.strictEqual(facilities.status, 200)
      const facility = facilities.body.data[0].id as string
      const packages = yield* call(
        "GET",
        `/v1/connections/${conn.connection_id}/facilities/${facility}/packages?per_page=5`,
        { token: me.access }
      )
      assert.strictEqual(packages.status, 200)
      assert.strictEqual(
        (yield* call("GET", `/v1/connections/${conn.connection_id}x`, { token: me.access })).status,
        404
      )
      assert.strictEqual((yield* call("GET", "/nowhere/abc123")).status, 404)

      const { status, text } = yield* scrape(TOKEN)
      assert.strictEqual(status, 200)
      const all = samples(text)
      const requests = all.filter((s) => s.name === "tracebridge_http_requests_total")
      const packagesRoute = Routes.template(`/v1/connections/c/facilities/f/packages`)!
      const ok = requests.find((s) => s.labels.route === packagesRoute && s.labels.method === "GET")
      assert.isDefined(ok, text)
      assert.strictEqual(ok!.labels.status_class, "2xx")
      assert.isAtLeast(ok!.value, 1)
      assert.isDefined(requests.find((s) => s.labels.route === "unmatched" && s.labels.status_class === "4xx"))
      assert.isDefined(
        all.find((s) =>
          s.name === "tracebridge_http_request_duration_seconds_count" && s.labels.route === packagesRoute
        )
      )
      const upstream = all.filter((s) => s.name === "tracebridge_upstream_requests_total")
      assert.isDefined(
        upstream.find((s) =>
          s.labels.provider === "provider_a" && s.labels.state === "CO" && s.labels.outcome === "ok"
        ),
        text
      )
      for (
        const name of [
          "tracebridge_sync_facilities",
          "tracebridge_sync_lag_seconds",
          "tracebridge_webhook_oldest_pending_seconds",
          "tracebridge_webhook_dead_lettered",
          "tracebridge_process_heap_used_bytes",
          "tracebridge_process_resident_memory_bytes"
        ]
      ) assert.isDefined(all.find((s) => s.name === name), `${name} missing`)
      assert.deepStrictEqual(
        all.filter((s) => s.name === "tracebridge_sync_facilities").map((s) => s.labels.status).sort(),
        ["backfilling", "error", "live"]
      )

      // bounded labels: no id of the session anywhere
      const ids = [conn.connection_id, facility, me.client_id, me.access]
      for (const sample of all) {
        for (const value of Object.values(sample.labels)) {
          for (const id of ids) assert.notInclude(value, id, `${sample.name} has an id in a label`)
          assert.notMatch(value, /abc123/)
        }
      }
      const labelNames = new Set(
        all.filter((s) => s.name.startsWith("tracebridge_")).flatMap((s) => Object.keys(s.labels))
      )
      for (const name of labelNames) {
        assert.include(
          [
            "route",
            "method",
            "status_class",
            "provider",
            "state",
            "outcome",
            "resource",
            "status",
            "phase",
            "quantile",
            "le"
          ],
          name
        )
      }
    }).pipe(Effect.provide(withToken)))

  it.effect("a read the sandbox read cache answers reached no state system: it is no upstream request", () =>
    Effect.gen(function*() {
      const { conn, facility, me } = yield* linkedFacility
      const path = `/v1/connections/${conn.connection_id}/facilities/${facility}/packages?per_page=7`
      const upstream = (text: string) =>
        samples(text).filter((x) =>
          x.name === "tracebridge_upstream_requests_total" && x.labels.provider === "provider_a" &&
          x.labels.outcome === "ok"
        ).reduce((n, x) => n + x.value, 0)
      const before = upstream((yield* scrape(TOKEN)).text)
      assert.strictEqual((yield* call("GET", path, { token: me.access })).status, 200)
      const missed = upstream((yield* scrape(TOKEN)).text)
      assert.isAtLeast(missed - before, 1, "the first read reaches the emulator")
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* call("GET", path, { token: me.access })).status, 200)
      assert.strictEqual(upstream((yield* scrape(TOKEN)).text), missed, "the cache's answers are not counted")
    }).pipe(
      Effect.provide(appWith({ worker: false, metrics: tokenMetrics }))
    ))

  it.scopedLive("with traces on too, the server span's end counts and times each request once", () =>
    Effect.gen(function*() {
      const collector = yield* receiver([200])
      yield* Effect.gen(function*() {
        const me = yield* signIn
        const value = (text: string, name: string) =>
          samples(text).filter((x) =>
            x.name === name && x.labels.route === "/v1/connections" && x.labels.method === "GET"
          )
            .reduce((n, x) => n + x.value, 0)
        const before = (yield* scrape(TOKEN)).text
        for (let i = 0; i < 3; i++) {
          assert.strictEqual((yield* call("GET", "/v1/connections", { token: me.access })).status, 200)
        }
        const after = (yield* scrape(TOKEN)).text
        assert.strictEqual(
          value(after, "tracebridge_http_requests_total") - value(before, "tracebridge_http_requests_total"),
          3
        )
        assert.strictEqual(
          value(after, "tracebridge_http_request_duration_seconds_count") -
            value(before, "tracebridge_http_request_duration_seconds_count"),
          3
        )
      }).pipe(
        Effect.provide(
          appWith({ tracing: true, metrics: tokenMetrics }).pipe(Layer.provide(tracesTo(collector)))
        )
      )
      // the layer is closed: every span was exported, the three reads' server spans among them
      const names = collector.received.flatMap((r) =>
        (JSON.parse(r.body).resourceSpans as Array<any>).flatMap((rs) =>
          (rs.scopeSpans as Array<any>).flatMap((ss) => (ss.spans as Array<{ name: string }>).map((x) => x.name))
        )
      )
      assert.strictEqual(names.filter((n) => n === "GET /v1/connections").length, 3)
    }))

  it.effect("a row the adapter cannot read counts as a skipped row of its provider and resource", () =>
    Effect.gen(function*() {
      const { conn, facility, me } = yield* linkedFacility
      // one package of the connection's world made unreadable (as TolerantReads.test.ts does)
      const { sandbox } = yield* Providers
      const key = sandbox.keys().find((k) => k.includes(conn.connection_id))!
      const [provider, state, ...login] = key.split("|")
      const world = sandbox.world(provider as never, state as never, login.join("|"))
      const packages = world.facilities.find((d) => d.facility.id === facility)!.packages
      assert.isAbove(packages.length, 0)
      ;(packages[0] as unknown as { quantity: unknown }).quantity = "lots"
      const before = samples((yield* scrape(TOKEN)).text)
        .find((s) => s.name === "tracebridge_skipped_rows_total" && s.labels.resource === "packages")?.value ?? 0
      const read = yield* call(
        "GET",
        `/v1/connections/${conn.connection_id}/facilities/${facility}/packages?per_page=100`,
        { token: me.access }
      )
      assert.strictEqual(read.status, 200)
      assert.strictEqual(read.body.meta.skipped.length, 1)
      const after = samples((yield* scrape(TOKEN)).text).find((s) =>
        s.name === "tracebridge_skipped_rows_total" && s.labels.resource === "packages"
      )
      assert.isDefined(after)
      assert.strictEqual(after!.labels.provider, "provider_a")
      assert.strictEqual(after!.value, before + 1)
    }).pipe(Effect.provide(withToken)))

  it.live(
    "a request past its upstream deadline counts as deadline exceeded for its provider",
    () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const conn = yield* linkSandbox(me.access)
        const facilities = yield* call("GET", `/v1/connections/${conn.connection_id}/facilities`, { token: me.access })
        const path = `/v1/connections/${conn.connection_id}/facilities/${facilities.body.data[0].id}/packages`
        const slow = yield* call("PUT", `/v1/sandbox/${conn.connection_id}/faults`, {
          token: me.access,
          json: { kind: "slow", delay_ms: 10_000 }
        })
        assert.strictEqual(slow.status, 200)
        const late = yield* call("GET", path, { token: me.access })
        assert.strictEqual(late.status, 504)
        assert.strictEqual(late.body.error.code, "provider_timeout")
        const all = samples((yield* scrape(TOKEN)).text)
        const exceeded = all.find((s) => s.name === "tracebridge_upstream_deadline_exceeded_total")
        assert.isDefined(exceeded)
        assert.deepStrictEqual(exceeded!.labels, { provider: "provider_a" })
        assert.isAtLeast(exceeded!.value, 1)
        assert.isDefined(
          all.find((s) => s.name === "tracebridge_http_requests_total" && s.labels.status_class === "5xx")
        )
      }).pipe(
        Effect.provide(withToken),
        Effect.provide(Layer.setConfigProvider(
          ConfigProvider.fromMap(new Map([["TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS", "1"]])).pipe(
            ConfigProvider.orElse(() => ConfigProvider.fromEnv())
          )
        ))
      ),
    20_000
  )

  it.live.each(["http/protobuf", "http/json"])(
    "with TRACEBRIDGE_METRICS_OTLP, the metrics are pushed to the OTLP endpoint as %s, and /metrics stays closed",
    (protocol) =>
      Effect.gen(function*() {
        const bodies: Array<{ readonly path: string; readonly type: string; readonly body: string }> = []
        const collector = yield* Effect.acquireRelease(
          Effect.async<http.Server>((resume) => {
            const server = http.createServer((req, res) => {
              const chunks: Array<Buffer> = []
              req.on("data", (c: Buffer) => chunks.push(c))
              req.on("end", () => {
                bodies.push({
                  path: req.url ?? "",
                  type: req.headers["content-type"] ?? "",
                  body: Buffer.concat(chunks).toString("utf8")
                })
                res.writeHead(200, { "content-type": "application/json" }).end("{}")
              })
            })
            server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
          }),
          (server) => Effect.async<void>((resume) => void server.close(() => resume(Effect.void)))
        )
        const port = (collector.address() as AddressInfo).port
        const settings = yield* MetricsServer.config.pipe(
          Effect.withConfigProvider(ConfigProvider.fromMap(
            new Map([
              ["TRACEBRIDGE_METRICS_OTLP", "true"],
              ["OTEL_EXPORTER_OTLP_ENDPOINT", `http://127.0.0.1:${port}/`],
              ["OTEL_METRIC_EXPORT_INTERVAL", "300"],
              ...(protocol === "http/json" ? [["OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"] as const] : [])
            ])
          ))
        )
        assert.deepStrictEqual(settings.otlp, Option.some(`http://127.0.0.1:${port}/v1/metrics`))
        assert.isTrue(MetricsServer.isEnabled(settings))
        const app = appWith({ metrics: settings })
        yield* Effect.gen(function*() {
          assert.strictEqual((yield* call("GET", "/v1/openapi.json")).status, 200)
          assert.strictEqual((yield* call("GET", "/metrics", { token: TOKEN })).status, 404)
          for (let i = 0; i < 40 && !bodies.some((b) => b.body.includes("tracebridge_http_requests_total")); i++) {
            yield* Effect.sleep("100 millis")
          }
        }).pipe(Effect.provide(app))
        const pushed = bodies.find((b) => b.body.includes("tracebridge_http_requests_total"))
        assert.isDefined(pushed, "no OTLP metrics export reached the collector")
        assert.strictEqual(pushed!.path, "/v1/metrics")
        assert.strictEqual(pushed!.type, protocol === "http/json" ? "application/json" : "application/x-protobuf")
        assert.include(pushed!.body, "/v1/openapi.json")
      }).pipe(Effect.scoped),
    20_000
  )
})
