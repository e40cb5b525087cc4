// Row 11 (issue #33): row 1's read (GET …/packages?per_page=100, whole stack) with the request log
// on (the default: every /v1 request queued and written to the database in batches) against the
// same server with it off (TRACEBRIDGE_REQUEST_LOG=off), both started in this run and loaded in
// turn, off-on-on-off, so that a drift of the shared machine weighs on both alike, after a first
// load of each that is not counted.
import Database from "libsql"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { packagesPath, startApi } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { sleep } from "../lib/proc.mjs"
import { ms, round, rps } from "../lib/stats.mjs"

const serverWith = async (env) => {
  const dataDir = mkdtempSync(join(tmpdir(), "tb-bench-log-"))
  const server = await startApi({ TRACEBRIDGE_DATA_DIR: dataDir, ...env })
  const { path } = await packagesPath(server)
  return {
    server,
    path,
    dataDir,
    stop: async () => {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

/** CPU seconds (user + system) the process has used so far (Linux `/proc/<pid>/stat`, 100 ticks a second). */
const cpuSeconds = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * One load; with the server's CPU time per request over the whole load (warm-up included), which
 * other work on the shared machine moves far less than the throughput.
 */
const measure = async (settings, { path, server }) => {
  const cpuBefore = cpuSeconds(server.proc.pid)
  const result = await load({
    ...settings,
    url: `${server.api}${path}`,
    headers: { authorization: `Bearer ${server.token}` }
  })
  if (result.failure) throw new Error(`non-2xx or failure under load: ${result.failure}; ${server.describe()}`)
  const cpu = cpuSeconds(server.proc.pid) - cpuBefore
  const total = result.requests + Math.round(result.rps * settings.warmup)
  return { ...result, cpuMsPerRequest: (1000 * cpu) / total }
}

/** Rows in the log's table of a server's database (read from outside, after its writer caught up). */
const logged = (dataDir) => {
  const db = new Database(join(dataDir, "tracebridge.db"), { readonly: true })
  try {
    return Number(db.prepare("SELECT COUNT(*) AS n FROM request_log").get().n)
  } finally {
    db.close()
  }
}

export default {
  id: 11,
  name: "GET packages?per_page=100 with the request log on vs off",
  async run({ load: settings, log }) {
    const off = await serverWith({ TRACEBRIDGE_REQUEST_LOG: "off" })
    let on
    try {
      on = await serverWith({})
      // A first load of each, not counted: a fresh server with the log on answers its first seconds
      // of load markedly slower than later (two runs: 356 against about 500 req/s), so the row
      // measures the steady state and reports that first load apart.
      const first = { off: await measure(settings, off), on: await measure(settings, on) }
      log(`first loads (not counted): off ${rps(first.off.rps)}, on ${rps(first.on.rps)}`)
      const runs = { off: [], on: [] }
      for (const which of ["off", "on", "on", "off"]) {
        const r = await measure(settings, which === "on" ? on : off)
        runs[which].push(r)
        log(
          `${which}: ${rps(r.rps)}, p50 ${ms(r.p50)}, p99 ${ms(r.p99)}, ${round(r.cpuMsPerRequest, 3)} ms CPU/request`
        )
      }
      // every request of the loaded server (warm-ups included) is in its log, unless dropped
      await sleep(1_000)
      const rows = logged(on.dataDir)
      const requested = runs.on.reduce((n, r) => n + r.requests, 0)
      const offRows = logged(off.dataDir)
      const mean = (rs, f) => rs.reduce((n, r) => n + f(r), 0) / rs.length
      const onRps = mean(runs.on, (r) => r.rps)
      const offRps = mean(runs.off, (r) => r.rps)
      const ratio = onRps / offRps
      const cost = 1 - ratio
      const cpu = { on: mean(runs.on, (r) => r.cpuMsPerRequest), off: mean(runs.off, (r) => r.cpuMsPerRequest) }
      const cpuCost = cpu.on / cpu.off - 1
      const p99 = { on: Math.max(...runs.on.map((r) => r.p99)), off: Math.max(...runs.off.map((r) => r.p99)) }
      return {
        measured: `log on ${rps(onRps)} (${runs.on.map((r) => rps(r.rps)).join(", ")}), p99 ${ms(p99.on)}, ${
          round(cpu.on, 3)
        } ms CPU/request`,
        baseline: `log off ${rps(offRps)} (${runs.off.map((r) => rps(r.rps)).join(", ")}), p99 ${ms(p99.off)}, ${
          round(cpu.off, 3)
        } ms CPU/request`,
        ratio,
        checks: [
          { what: "throughput cost", value: round(cost, 3), target: "<= 0.10", pass: cost <= 0.1 },
          { what: "CPU per request, on vs off", value: round(cpuCost, 3), target: "(noted)", pass: true },
          { what: "entries stored", value: rows, target: `>= ${requested} measured`, pass: rows >= requested },
          { what: "entries with the log off", value: offRows, target: "== 0", pass: offRows === 0 }
        ],
        note: `Two servers started in this run (as row 1: autocannon ${settings.connections} connections, ` +
          `${settings.warmup} s warm-up + ${settings.duration} s per load), loaded in turn off, on, on, off; ` +
          `ratio = mean on / mean off req/s, after a first load of each that is not counted (off ${
            rps(first.off.rps)
          }, on ${rps(first.on.rps)}). The servers' own CPU time per request (from /proc, warm-ups ` +
          `included) is ${round(cpu.on, 3)} ms on and ${round(cpu.off, 3)} ms off (${cpuCost >= 0 ? "+" : ""}${
            Math.round(cpuCost * 1000) / 10
          }%): other work on a shared machine moves it far less than the throughput. The on server stored ${rows} entries for ${requested} measured ` +
          `requests (plus its warm-ups and set-up calls); the off server none.`,
        data: { on: runs.on, off: runs.off, first, stored: rows, requested, cpuMsPerRequest: cpu }
      }
    } finally {
      await off.stop()
      if (on !== undefined) await on.stop()
    }
  }
}
