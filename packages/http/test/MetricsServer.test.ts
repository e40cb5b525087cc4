/**
 * The metrics as an operator sees them: a real Prometheus (Debian's `prometheus`, started here on
 * a loopback port with a temporary config and store) scrapes a running server's own metrics port
 * every second, after a scripted session (requests, an upstream 429 from a sandbox fault, a failed
 * then retried webhook delivery, a sync gone live); the series are read back through Prometheus's
 * query API. And the alert rules of `deploy/` pass `promtool check rules`.
 *
 * Without `/usr/bin/prometheus` the Prometheus test is skipped, with its reason, outside CI; under
 * `CI=true` (`.ci/run` installs the package) a missing binary fails it.
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Effect, Layer, Option } from "effect"
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as MetricsServer from "../src/MetricsServer.js"
import * as Crypto from "../src/services/Crypto.js"
import { freePort } from "./support/Process.js"
import { receiver } from "./support/Receiver.js"
import { call, linkSandbox, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const PROMETHEUS = "/usr/bin/prometheus"
const PROMTOOL = "/usr/bin/promtool"
const inCi = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false"
const root = fileURLToPath(new URL("../../../", import.meta.url))
const alerts = path.join(root, "deploy/prometheus/alerts.yml")

const pause = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

/** Polls `check` every 250 ms until it gives a value, or fails after `ms`. */
const eventually = <A, E, R>(what: string, check: Effect.Effect<A | undefined, E, R>, ms = 15_000) =>
  Effect.gen(function*() {
    const started = Date.now()
    for (;;) {
      const found = yield* check
      if (found !== undefined) return found
      if (Date.now() - started > ms) return assert.fail(`timed out after ${ms} ms waiting for ${what}`)
      yield* pause(250)
    }
  })

/** Prometheus on a loopback port, scraping `target` every second, for the scope of the test. */
const prometheus = (target: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-prometheus-"))
      const port = await freePort()
      fs.writeFileSync(
        path.join(dir, "prometheus.yml"),
        [
          "global:",
          "  scrape_interval: 1s",
          "  scrape_timeout: 1s",
          "scrape_configs:",
          "  - job_name: tracebridge",
          "    static_configs:",
          `      - targets: ["${target}"]`,
          ""
        ].join("\n")
      )
      const child = spawn(PROMETHEUS, [
        `--config.file=${path.join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${path.join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn"
      ], { stdio: ["ignore", "ignore", "pipe"] })
      let stderr = ""
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
      const started: {
        readonly child: ChildProcess
        readonly dir: string
        readonly url: string
        readonly stderr: () => string
      } = {
        child,
        dir,
        url: `http://127.0.0.1:${port}`,
        stderr: () => stderr
      }
      return started
    }),
    ({ child, dir }) =>
      Effect.promise(() =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve()
          child.once("exit", () => resolve())
          child.kill("SIGTERM")
        })
      ).pipe(Effect.ensuring(Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))))
  )

interface Series {
  readonly metric: Record<string, string>
  readonly value: [number, string]
}

const query = (base: string, promql: string) =>
  Effect.promise(async (): Promise<ReadonlyArray<Series>> => {
    const response = await fetch(`${base}/api/v1/query?query=${encodeURIComponent(promql)}`)
    const body = (await response.json()) as { status: string; data?: { result: Array<Series> }; error?: string }
    if (body.status !== "success") throw new Error(`${promql}: ${body.error}`)
    return body.data!.result
  })

/** The series of `promql` once Prometheus has one for which `accept` holds. */
const series = (base: string, promql: string, accept: (s: Series) => boolean = () => true) =>
  eventually(
    promql,
    Effect.map(query(base, promql), (result) => (result.some(accept) ? result : undefined))
  )

const available = fs.existsSync(PROMETHEUS)

describe("MetricsServer", () => {
  it.skipIf(!available && !inCi)(
    `a real Prometheus scrapes the metrics port and reads the series back${
      available ? "" : " (skipped: /usr/bin/prometheus is absent; apt-get install prometheus)"
    }`,
    async () => {
      assert.isTrue(available, `${PROMETHEUS} is absent under CI: .ci/run installs Debian's prometheus`)
      const metricsPort = await freePort()
      const app = Http.makeHttpLive({
        worker: true,
        metrics: { ...MetricsServer.off, port: Option.some(metricsPort), host: "127.0.0.1" }
      }).pipe(
        Layer.provideMerge(Server.layerTest),
        Layer.provideMerge(Crypto.layerTest),
        Layer.provideMerge(TestDatabase.layer)
      )
      await Effect.gen(function*() {
        const prom = yield* prometheus(`127.0.0.1:${metricsPort}`)
        const hooks = yield* receiver([500, 200])
        const me = yield* signIn
        const conn = yield* linkSandbox(me.access)
        const id = conn.connection_id

        // a facility's sync goes live (the backfill runs in the background), so the lag has a value
        const facilities = yield* eventually(
          "a facility's sync to go live",
          Effect.gen(function*() {
            const status = yield* call("GET", `/v1/connections/${id}/sync`, { token: me.access })
            const list = (status.body?.data?.facilities ?? []) as Array<
              { id?: string; facility_id?: string; status: string }
            >
            return list.some((f) => f.status === "live") ? list : undefined
          }),
          30_000
        )
        assert.isAbove(facilities.length, 0)

        // an upstream 429 from a sandbox fault
        const list = yield* call("GET", `/v1/connections/${id}/facilities`, { token: me.access })
        const packages = `/v1/connections/${id}/facilities/${list.body.data[0].id}/packages?per_page=5`
        assert.strictEqual((yield* call("GET", packages, { token: me.access })).status, 200)
        const fault = yield* call("PUT", `/v1/sandbox/${id}/faults`, {
          token: me.access,
          json: { kind: "rate_limited", retry_after: 90 }
        })
        assert.strictEqual(fault.status, 200, JSON.stringify(fault.body))
        const limited = yield* call("GET", packages, { token: me.access })
        assert.strictEqual(limited.status, 503, JSON.stringify(limited.body))
        assert.strictEqual(limited.body.error.code, "provider_rate_limited")
        yield* call("DELETE", `/v1/sandbox/${id}/faults`, { token: me.access })

        // a webhook delivery that fails (500), then is retried and delivered (200)
        const hook = yield* call("POST", "/v1/webhooks/", {
          token: me.access,
          json: { url: hooks.url, events: ["lab_result.received"] }
        })
        assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
        const simulated = yield* call("POST", `/v1/sandbox/${id}/simulate`, {
          token: me.access,
          json: { scenario: "lab_result_received", params: { result: "fail" } }
        })
        assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
        // the worker makes the first attempt (500); the retry makes it due now; the worker delivers
        yield* eventually("the first attempt", Effect.sync(() => hooks.received.length >= 1 ? true : undefined))
        const hookId = hook.body.data.id as string
        const delivery = yield* eventually(
          "the failed attempt logged",
          Effect.gen(function*() {
            const log = yield* call("GET", `/v1/webhooks/${hookId}/deliveries`, { token: me.access })
            const d = log.body.data[0]
            return d !== undefined && d.status === "pending" && d.attempts.length === 1 ? d : undefined
          })
        )
        const retried = yield* call("POST", `/v1/webhooks/${hookId}/deliveries/${delivery.id}/retry`, {
          token: me.access
        })
        assert.strictEqual(retried.status, 200, JSON.stringify(retried.body))
        yield* eventually("the retried delivery", Effect.sync(() => hooks.received.length >= 2 ? true : undefined))
        assert.strictEqual(hooks.received.length, 2)

        // read back through Prometheus's query API
        const base = prom.url
        const up = yield* series(base, `up{job="tracebridge"}`, (s) => s.value[1] === "1")
        assert.strictEqual(up.length, 1, prom.stderr())
        const requests = yield* series(
          base,
          `tracebridge_http_requests_total{route="/v1/connections/:connection_id/facilities/:facility_id/packages"}`,
          (s) => s.metric.status_class === "5xx"
        )
        assert.deepStrictEqual(
          requests.map((s) => s.metric.status_class).sort(),
          ["2xx", "5xx"]
        )
        for (const s of requests) assert.notInclude(JSON.stringify(s.metric), id)
        const limits = yield* series(base, `tracebridge_upstream_rate_limited_total`)
        assert.deepStrictEqual(
          limits.map((s) => [s.metric.provider, s.metric.state]),
          [["provider_a", "CO"]]
        )
        assert.isAtLeast(Number(limits[0]!.value[1]), 1)
        const outcomes = yield* series(
          base,
          `tracebridge_upstream_requests_total{outcome="rate_limited"}`
        )
        assert.strictEqual(outcomes[0]!.metric.provider, "provider_a")
        const deliveries = yield* series(
          base,
          `sum by (outcome) (tracebridge_webhook_deliveries_total)`,
          (s) => s.metric.outcome === "succeeded"
        )
        assert.deepStrictEqual(
          Object.fromEntries(deliveries.map((s) => [s.metric.outcome, s.value[1]])),
          { retrying: "1", succeeded: "1" }
        )
        const attempts = yield* series(base, `tracebridge_webhook_attempts_total`, (s) => s.value[1] === "2")
        assert.strictEqual(attempts[0]!.value[1], "2")
        const live = yield* series(base, `tracebridge_sync_facilities{status="live"}`, (s) => Number(s.value[1]) > 0)
        assert.isAtLeast(Number(live[0]!.value[1]), facilities.filter((f) => f.status === "live").length)
        const lag = yield* series(base, `tracebridge_sync_lag_seconds`)
        const lagSeconds = Number(lag[0]!.value[1])
        assert.isAtLeast(lagSeconds, 0)
        assert.isBelow(lagSeconds, 120)
        const pages = yield* series(base, `sum(tracebridge_sync_pages_stored_total{phase="backfill"})`)
        assert.isAbove(Number(pages[0]!.value[1]), 0)
        const pending = yield* series(base, `tracebridge_webhook_oldest_pending_seconds`)
        assert.strictEqual(pending[0]!.value[1], "0")
        const heap = yield* series(base, `tracebridge_process_heap_used_bytes`)
        assert.isAbove(Number(heap[0]!.value[1]), 1_000_000)
      }).pipe(Effect.provide(app), Effect.scoped, Effect.runPromise)
    },
    90_000
  )

  it.skipIf(!fs.existsSync(PROMTOOL) && !inCi)("the alert rules pass promtool check rules", () => {
    assert.isTrue(fs.existsSync(PROMTOOL), `${PROMTOOL} is absent under CI: .ci/run installs Debian's prometheus`)
    const out = execFileSync(PROMTOOL, ["check", "rules", alerts], { encoding: "utf8" })
    assert.match(out, /SUCCESS: \d+ rules found/)
  })

  it("the scrape example, the rules and the dashboard name only metrics that exist", () => {
    const defined = new Set(
      [...fs.readFileSync(path.join(root, "packages/http/src/Metrics.ts"), "utf8").matchAll(/"(tracebridge_[a-z_]+)"/g)]
        .map((m) => m[1]!)
    )
    assert.isAtLeast(defined.size, 20)
    for (const file of ["deploy/prometheus/alerts.yml", "deploy/grafana/tracebridge.json", "docs/operations.md"]) {
      const text = fs.readFileSync(path.join(root, file), "utf8")
      const used = new Set(
        [...text.matchAll(/\b(tracebridge_[a-z_]+)/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, ""))
      )
      assert.isAbove(used.size, 3, file)
      for (const name of used) {
        assert.isTrue(defined.has(name), `${file} names ${name}, which Metrics.ts does not define`)
      }
    }
    const dashboard = JSON.parse(fs.readFileSync(path.join(root, "deploy/grafana/tracebridge.json"), "utf8"))
    assert.isAbove(dashboard.panels.length, 10)
  })
})
