// Row 10 (issue #32): row 1's read (GET …/packages?per_page=100, whole stack) with traces and
// metrics on (traces exported over OTLP/HTTP, http/protobuf, to a local no-op receiver; metrics
// recorded and served on a listener of their own, scraped once after the load), against the same
// server with both off, in one run: the two loaded at the same time, at the same fixed rate, on
// the same core, and the cost read as the servers' CPU per request, window by window.
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:http"
import { availableParallelism } from "node:os"
import { packagesPath, startApi } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { freePort } from "../lib/proc.mjs"
import { median, ms, round, rps } from "../lib/stats.mjs"

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

/** The share of the slower server's saturated rate each server is loaded at, in the windows. */
const SHARE = 0.8

/** Seconds a measured window lasts. */
const WINDOW_SECONDS = 3

const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length

/** Half the width of a 95% confidence interval of the mean (normal approximation). */
const halfWidth95 = (xs) => {
  const m = mean(xs)
  const variance = xs.reduce((a, x) => a + (x - m) ** 2, 0) / Math.max(1, xs.length - 1)
  return 1.96 * Math.sqrt(variance / xs.length)
}

/**
 * Pins both servers (every thread) to the last CPU and the bench process (autocannon) to the
 * others, when `taskset` and two CPUs exist: the servers then share one core's conditions at every
 * moment, and the load generator does not take their time. Returns what undoes the bench's pin.
 */
const pin = (pids) => {
  const cpus = availableParallelism()
  if (cpus < 2) return { pinned: false, undo: () => {} }
  try {
    for (const pid of pids) {
      execFileSync("taskset", ["-a", "-p", "-c", String(cpus - 1), String(pid)], { stdio: "ignore" })
    }
    execFileSync("taskset", ["-a", "-p", "-c", `0-${cpus - 2}`, String(process.pid)], { stdio: "ignore" })
  } catch {
    return { pinned: false, undo: () => {} }
  }
  return {
    pinned: true,
    undo: () => execFileSync("taskset", ["-a", "-p", "-c", `0-${cpus - 1}`, String(process.pid)], { stdio: "ignore" })
  }
}

/**
 * One window: both servers loaded at the same time (`rate` requests a second each, or as fast as
 * they answer), their throughput, latency and own CPU per request.
 */
const window = async (servers, paths, settings, seconds, rate) => {
  const before = servers.map((server) => cpuOf(server.proc.pid))
  const results = await Promise.all(servers.map((server, i) =>
    load({
      ...settings,
      ...(rate === undefined ? {} : { rate }),
      duration: seconds,
      warmup: 0,
      url: `${server.api}${paths[i]}`,
      headers: { authorization: `Bearer ${server.token}` }
    })
  ))
  return results.map((result, i) => {
    if (result.failure) {
      throw new Error(`non-2xx or failure under load: ${result.failure}; ${servers[i].describe()}`)
    }
    return { ...result, cpuPerRequest: (cpuOf(servers[i].proc.pid) - before[i]) / result.requests }
  })
}

/**
 * One pair of servers, off and on, started in the order `first` names: both loaded at once as fast
 * as they answer (warm-up, then the throughput reported), then `count` windows at a fixed rate.
 */
const measurePair = async ({ calibrate, collector, count, first, log, quick, settings }) => {
  const metricsPort = await freePort()
  const onEnv = calibrate ? {} : {
    OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_SERVICE_NAME: "tracebridge-bench",
    TRACEBRIDGE_METRICS_PORT: String(metricsPort),
    TRACEBRIDGE_METRICS_HOST: "127.0.0.1"
  }
  const started = []
  let pinning = { pinned: false, undo: () => {} }
  try {
    for (const which of first === "off" ? ["off", "on"] : ["on", "off"]) {
      started.push({ which, server: await startApi(which === "off" ? {} : onEnv) })
    }
    // index 0 is always the off server below, whatever the start order
    const servers = ["off", "on"].map((which) => started.find((s) => s.which === which).server)
    const paths = [(await packagesPath(servers[0])).path, (await packagesPath(servers[1])).path]
    pinning = pin(servers.map((server) => server.proc.pid))
    // Both at once, as fast as they answer: warms both, and gives the throughput each reaches
    // while they share the core (reported), from which the fixed rate below is set.
    log(`${first} started first: warming both at once${pinning.pinned ? " (pinned to one core)" : ""}`)
    await window(servers, paths, settings, quick ? 2 : 5)
    const warm = await window(servers, paths, settings, quick ? 3 : 10)
    // Each server at 80% of what the slower reached: the core is then about 80% busy, near row
    // 1's saturation, yet neither waits for the other and each does the same work in every window.
    const rate = Math.max(20, Math.round(SHARE * Math.min(warm[0].rps, warm[1].rps)))
    const windows = []
    for (let i = 0; i < count; i++) {
      const [w0, w1] = await window(servers, paths, { ...settings, connections: 20 }, WINDOW_SECONDS, rate)
      windows.push({ off: w0, on: w1, ratio: w1.cpuPerRequest / w0.cpuPerRequest })
      log(
        `window ${i + 1}/${count}: off ${Math.round(w0.cpuPerRequest * 1000)} µs, on ` +
          `${Math.round(w1.cpuPerRequest * 1000)} µs a request (${windows[i].ratio.toFixed(3)})`
      )
    }
    const text = calibrate ? "" : await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text())
    const counted = [...text.matchAll(/^tracebridge_http_requests_total\{[^}]*status_class="2xx"[^}]*\} (\d+)/gm)]
      .reduce((n, m) => n + Number(m[1]), 0)
    const served = windows.reduce((n, w) => n + w.on.requests, 0)
    if (!calibrate && counted < served) throw new Error(`metrics on, but /metrics counted ${counted} of ${served}`)
    return {
      first,
      rate,
      warm: { off: warm[0].rps, on: warm[1].rps, cpu: warm[1].cpuPerRequest / warm[0].cpuPerRequest },
      windows,
      counted
    }
  } finally {
    pinning.undo()
    await Promise.all(started.map(({ server }) => server.stop()))
  }
}

export default {
  id: 10,
  name: "GET packages?per_page=100 with OTLP traces and metrics on vs off",
  async run({ load: settings, log, quick }) {
    const collector = await noopCollector()
    try {
      // BENCH_TRACED_CALIBRATE=1: the "on" servers are off too, so that the row measures its
      // method's own bias and spread (an A/A run), not tracing.
      const calibrate = process.env.BENCH_TRACED_CALIBRATE === "1"
      if (calibrate) log("calibration: every server off (A/A)")
      // Two pairs, the start order swapped: a server started second measured a few percent
      // cheaper than its twin in A/A runs, and the swap cancels that.
      const count = quick ? 4 : 12
      const pairs = []
      for (const first of ["off", "on"]) {
        pairs.push(await measurePair({ calibrate, collector, count, first, log, quick, settings }))
      }
      const batches = collector.state.batches
      const counted = pairs.reduce((n, p) => n + p.counted, 0)
      log(`${batches} batches received; ${counted} requests counted`)
      if (!calibrate && batches === 0) throw new Error("traces on, but the collector received no batch")
      const windows = pairs.flatMap((p) => p.windows)
      const ratios = windows.map((w) => w.ratio)
      // The cost: the mean over the windows of the on server's CPU per request against the off
      // server's in the same seconds, minus one.
      const cost = mean(ratios) - 1
      const interval = halfWidth95(ratios)
      const byPair = pairs.map((p) => mean(p.windows.map((w) => w.ratio)) - 1)
      const throughput = mean(pairs.map((p) => p.warm.on / p.warm.off))
      log(
        `cost ${(cost * 100).toFixed(1)}% ± ${(interval * 100).toFixed(1)} (95%; off first ` +
          `${(byPair[0] * 100).toFixed(1)}%, on first ${(byPair[1] * 100).toFixed(1)}%); as fast as each ` +
          `answers, on / off ${throughput.toFixed(3)} (CPU a request ${
            pairs.map((p) => p.warm.cpu.toFixed(3)).join(", ")
          })`
      )
      const summary = (ws) => ({
        rps: median(ws.map((w) => w.rps)),
        p50: median(ws.map((w) => w.p50)),
        p99: median(ws.map((w) => w.p99)),
        cpuPerRequest: median(ws.map((w) => w.cpuPerRequest))
      })
      const onSummary = summary(windows.map((w) => w.on))
      const offSummary = summary(windows.map((w) => w.off))
      const warmOn = mean(pairs.map((p) => p.warm.on))
      const warmOff = mean(pairs.map((p) => p.warm.off))
      return {
        measured: `traces and metrics on: ${Math.round(onSummary.cpuPerRequest * 1000)} µs CPU a request ` +
          `(p99 ${ms(onSummary.p99)}); ${rps(warmOn)} as fast as it answers`,
        baseline: `off: ${Math.round(offSummary.cpuPerRequest * 1000)} µs CPU a request (p99 ` +
          `${ms(offSummary.p99)}); ${rps(warmOff)} as fast as it answers`,
        ratio: mean(ratios),
        checks: [
          {
            what: "CPU cost a request (mean of the windows)",
            value: round(cost, 3),
            target: "<= 0.10",
            pass: cost <= 0.1
          },
          { what: "95% interval of the cost", value: `±${round(interval, 3)}`, target: "(reported)", pass: true },
          { what: "throughput on / off, both at once", value: round(throughput, 3), target: "(reported)", pass: true },
          { what: "batches exported", value: batches, target: "> 0", pass: calibrate || batches > 0 }
        ],
        note: `Two pairs of servers (off and on), one pair after the other, the off server started first in ` +
          `the first pair and second in the other (in A/A runs the server started second measured a few ` +
          `percent cheaper). In each pair both servers are loaded at the same time, both pinned to one core and autocannon to the other (taskset, when there are two cores): first as ` +
          `fast as each answers (${quick ? 2 : 5} s discarded, then ${quick ? 3 : 10} s; the throughput ratio ` +
          `reported is the mean of the pairs'), then ${count} windows of ${WINDOW_SECONDS} s at a fixed rate ` +
          `each (${pairs.map((p) => p.rate).join(" and ")} req/s: ${SHARE * 100}% of the slower's rate as fast ` +
          `as it answers; autocannon, 20 connections each). Ratio = the mean over the ${ratios.length} windows ` +
          `of the on server's CPU per request (user + system, /proc) over the off server's in the same window; ` +
          `the cost checked is that mean minus one (95% interval ±${round(interval, 3)}; by pair ` +
          `${byPair.map((c) => round(c, 3)).join(" and ")}). Traces exported as http/protobuf to a loopback ` +
          `receiver that drops them (${batches} batches, ${collector.state.bytes} bytes); metrics recorded and ` +
          `served on TRACEBRIDGE_METRICS_PORT, scraped after the load (${counted} 2xx requests counted).`,
        data: {
          on: onSummary,
          off: offSummary,
          pairs,
          cost,
          interval,
          batches,
          bytes: collector.state.bytes
        }
      }
    } finally {
      await collector.stop()
    }
  }
}
