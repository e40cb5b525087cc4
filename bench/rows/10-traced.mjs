// Row 10 (issue #32): row 1's read (GET …/packages?per_page=100, whole stack) with traces and
// metrics on (traces exported over OTLP/HTTP, http/protobuf, to a local no-op receiver; metrics
// recorded and served on a listener of their own, scraped once after the load), against the same
// server with both off, in one run.
import { createServer } from "node:http"
import { packagesPath, startApi } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { freePort } from "../lib/proc.mjs"
import { ms, round, rps } from "../lib/stats.mjs"

/** An OTLP/HTTP receiver that reads and drops every batch; counts the bytes it got. */
const noopCollector = async () => {
  const port = await freePort()
  const state = { batches: 0, bytes: 0 }
  const server = createServer((req, res) => {
    req.on("data", (c) => (state.bytes += c.length))
    req.on("end", () => {
      state.batches++
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end()
    })
  })
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve))
  return { url: `http://127.0.0.1:${port}`, state, stop: () => new Promise((resolve) => server.close(resolve)) }
}

const measure = async (settings, env, after = async () => {}) => {
  const server = await startApi(env)
  try {
    const { path } = await packagesPath(server)
    const result = await load({
      ...settings,
      url: `${server.api}${path}`,
      headers: { authorization: `Bearer ${server.token}` }
    })
    if (result.failure) throw new Error(`non-2xx or failure under load: ${result.failure}; ${server.describe()}`)
    return { ...result, ...(await after()) }
  } finally {
    await server.stop()
  }
}

export default {
  id: 10,
  name: "GET packages?per_page=100 with OTLP traces and metrics on vs off",
  async run({ load: settings, log }) {
    const collector = await noopCollector()
    try {
      log("traces and metrics off")
      const off = await measure(settings, {})
      log(`off: ${rps(off.rps)}, p99 ${ms(off.p99)}; now traces and metrics on`)
      const metricsPort = await freePort()
      const on = await measure(settings, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "tracebridge-bench",
        TRACEBRIDGE_METRICS_PORT: String(metricsPort),
        TRACEBRIDGE_METRICS_HOST: "127.0.0.1"
      }, async () => {
        const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text())
        const counted = [...text.matchAll(/^tracebridge_http_requests_total\{[^}]*status_class="2xx"[^}]*\} (\d+)/gm)]
          .reduce((n, m) => n + Number(m[1]), 0)
        return { counted }
      })
      const batches = collector.state.batches
      log(`on: ${rps(on.rps)}, p99 ${ms(on.p99)}; ${batches} batches received; ${on.counted} requests counted`)
      if (collector.state.batches === 0) throw new Error("traces on, but the collector received no batch")
      if (on.counted < on.requests) throw new Error(`metrics on, but /metrics counted ${on.counted} of ${on.requests}`)
      const ratio = on.rps / off.rps
      const cost = 1 - ratio
      return {
        measured: `traces and metrics on ${rps(on.rps)}, p50 ${ms(on.p50)}, p99 ${ms(on.p99)}`,
        baseline: `off ${rps(off.rps)}, p99 ${ms(off.p99)}`,
        ratio,
        checks: [
          { what: "throughput cost", value: round(cost, 3), target: "<= 0.10", pass: cost <= 0.1 },
          { what: "batches exported", value: collector.state.batches, target: "> 0", pass: collector.state.batches > 0 }
        ],
        note:
          `Two servers one after the other (same settings as row 1: autocannon ${settings.connections} connections, ` +
          `${settings.warmup} s warm-up + ${settings.duration} s); traces exported as http/protobuf to a loopback ` +
          `receiver that drops them (${collector.state.batches} batches, ${collector.state.bytes} bytes); metrics ` +
          `recorded and served on TRACEBRIDGE_METRICS_PORT, scraped after the load (${on.counted} 2xx requests ` +
          `counted). Ratio = on / off req/s.`,
        data: { on, off, batches: collector.state.batches, bytes: collector.state.bytes }
      }
    } finally {
      await collector.stop()
    }
  }
}
