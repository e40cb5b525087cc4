// Row 10 (issue #32): row 1's read (GET …/packages?per_page=100, whole stack) with traces and
// metrics on (traces exported over OTLP/HTTP, http/protobuf, to a local no-op receiver; metrics
// recorded and served on a listener of their own, scraped once after the load), against the same
// server with both off, in one run: the two side by side, the load alternating between them.
import { readFileSync } from "node:fs"
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

/** CPU milliseconds (user + system) the process has used so far. */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100)
}

const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

/** One load window on a server: its throughput, latency and the server's CPU per request. */
const measureWindow = async (server, path, settings, seconds) => {
  const before = cpuOf(server.proc.pid)
  const result = await load({
    ...settings,
    duration: seconds,
    warmup: 0,
    url: `${server.api}${path}`,
    headers: { authorization: `Bearer ${server.token}` }
  })
  if (result.failure) throw new Error(`non-2xx or failure under load: ${result.failure}; ${server.describe()}`)
  return { ...result, cpuPerRequest: (cpuOf(server.proc.pid) - before) / result.requests }
}

export default {
  id: 10,
  name: "GET packages?per_page=100 with OTLP traces and metrics on vs off",
  async run({ load: settings, log, quick }) {
    const collector = await noopCollector()
    const metricsPort = await freePort()
    const servers = []
    try {
      // Both servers run side by side, and the load alternates between them in short windows
      // (off then on, then on then off, …): a change in what else the machine runs then weighs
      // on both alike, where two long runs one after the other measured it as the cost.
      const off = await startApi({})
      servers.push(off)
      const on = await startApi({
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
        OTEL_SERVICE_NAME: "tracebridge-bench",
        TRACEBRIDGE_METRICS_PORT: String(metricsPort),
        TRACEBRIDGE_METRICS_HOST: "127.0.0.1"
      })
      servers.push(on)
      const paths = { off: (await packagesPath(off)).path, on: (await packagesPath(on)).path }
      log("warming both servers")
      await measureWindow(off, paths.off, settings, settings.warmup)
      await measureWindow(on, paths.on, settings, settings.warmup)
      // Ten rounds of 5 s: the same server's CPU per request moves by 10–20% between rounds on a
      // shared two-core machine, and four rounds left the median on either side of the target.
      const rounds = quick ? 2 : 10
      const seconds = quick ? Math.max(2, settings.duration) : 5
      const windows = { off: [], on: [] }
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? ["off", "on"] : ["on", "off"]
        for (const which of order) {
          windows[which].push(await measureWindow(which === "off" ? off : on, paths[which], settings, seconds))
        }
        log(
          `round ${round + 1}/${rounds}: off ${rps(windows.off[round].rps)}, on ${rps(windows.on[round].rps)} ` +
            `(${(windows.on[round].rps / windows.off[round].rps).toFixed(3)})`
        )
      }
      const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text())
      const counted = [...text.matchAll(/^tracebridge_http_requests_total\{[^}]*status_class="2xx"[^}]*\} (\d+)/gm)]
        .reduce((n, m) => n + Number(m[1]), 0)
      const served = windows.on.reduce((n, w) => n + w.requests, 0)
      const batches = collector.state.batches
      log(`${batches} batches received; ${counted} requests counted`)
      if (batches === 0) throw new Error("traces on, but the collector received no batch")
      if (counted < served) throw new Error(`metrics on, but /metrics counted ${counted} of ${served}`)
      const ratio = median(windows.on.map((w, i) => w.rps / windows.off[i].rps))
      const cpuRatio = median(windows.on.map((w, i) => w.cpuPerRequest / windows.off[i].cpuPerRequest))
      // The cost is the server's own CPU per request, on against off: what tracing and metrics add
      // to each request. Throughput is reported beside it, but on a shared machine it also moves
      // with whatever else runs (rounds of the same server differed by 2x while other work ran).
      const cost = cpuRatio - 1
      const summary = (ws) => ({
        rps: median(ws.map((w) => w.rps)),
        p50: median(ws.map((w) => w.p50)),
        p99: median(ws.map((w) => w.p99)),
        cpuPerRequest: median(ws.map((w) => w.cpuPerRequest))
      })
      const onSummary = summary(windows.on)
      const offSummary = summary(windows.off)
      return {
        measured: `traces and metrics on ${rps(onSummary.rps)}, p50 ${ms(onSummary.p50)}, p99 ${ms(onSummary.p99)}, ` +
          `${Math.round(onSummary.cpuPerRequest * 1000)} µs CPU a request`,
        baseline: `off ${rps(offSummary.rps)}, p99 ${ms(offSummary.p99)}, ` +
          `${Math.round(offSummary.cpuPerRequest * 1000)} µs CPU a request`,
        ratio,
        checks: [
          { what: "CPU cost a request", value: round(cost, 3), target: "<= 0.10", pass: cost <= 0.1 },
          { what: "throughput on / off", value: round(ratio, 3), target: "(reported)", pass: true },
          { what: "batches exported", value: batches, target: "> 0", pass: batches > 0 }
        ],
        note: `Two servers side by side, the load alternating between them: ${rounds} rounds of ${seconds} s on each ` +
          `(autocannon ${settings.connections} connections, ${settings.warmup} s warm-up each), the order flipped ` +
          `every round. Ratio = the median of the rounds' on / off req/s; the cost checked is the median of the rounds' ` +
          `server CPU per request, on / off, minus one. Traces exported as http/protobuf to a ` +
          `loopback receiver that drops them (${batches} batches, ${collector.state.bytes} bytes); metrics recorded ` +
          `and served on TRACEBRIDGE_METRICS_PORT, scraped after the load (${counted} 2xx requests counted).`,
        data: { on: onSummary, off: offSummary, rounds: windows, cpuRatio, batches, bytes: collector.state.bytes }
      }
    } finally {
      await Promise.all(servers.map((server) => server.stop()))
      await collector.stop()
    }
  }
}
