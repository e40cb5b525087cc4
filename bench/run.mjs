#!/usr/bin/env node
// `npm run bench`: the performance suite of issue 10. Every figure is a ratio against a baseline
// measured in the same run. Writes bench/results.json, prints the table and rewrites the table in
// docs/performance.md.
//
//   node bench/run.mjs                 all rows, full durations; writes results.json and the docs
//   node bench/run.mjs --only 1,3      some rows
//   node bench/run.mjs --quick         shorter durations and fewer samples (development)
//   node bench/run.mjs --write         also write results.json/docs after --only or --quick
//                                      (rows are merged into the existing results by number)
//
// Exits 1 when a row errors (a failed check inside a row, e.g. a non-2xx under load); a missed
// target is reported, not an error.
import { execSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg, totalmem } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { closePg } from "./lib/pg.mjs"
import { installCleanup, killAll } from "./lib/proc.mjs"
import { markdown, printTable, updateDocs } from "./lib/report.mjs"
import { closeShared } from "./lib/shared.mjs"

const here = fileURLToPath(new URL(".", import.meta.url))
const root = join(here, "..")
const resultsFile = join(here, "results.json")
const docsFile = join(root, "docs", "performance.md")

const args = process.argv.slice(2)
const quick = args.includes("--quick")
const onlyArg = args.find((a) => a.startsWith("--only"))
const onlyValue = onlyArg === "--only" ? args[args.indexOf("--only") + 1] : onlyArg?.split("=")[1]
const only = onlyValue === undefined ? undefined : new Set(onlyValue.split(",").map((s) => Number(s.trim())))
if (only !== undefined && [...only].some((n) => !Number.isInteger(n))) {
  console.error(`--only takes row numbers, e.g. --only 1,3 (got ${onlyValue})`)
  process.exit(2)
}
const write = args.includes("--write") || (!quick && only === undefined)

installCleanup()

const settings = {
  quick,
  load: quick ? { connections: 50, duration: 3, warmup: 1 } : { connections: 50, duration: 10, warmup: 3 },
  log: (text) => process.stderr.write(`  ${text}\n`)
}

const machine = () => {
  const sh = (cmd) => {
    try {
      return execSync(cmd, { encoding: "utf8" }).trim()
    } catch {
      return undefined
    }
  }
  return {
    cpus: Number(sh("nproc") ?? cpus().length),
    cpuModel: cpus()[0]?.model?.trim() ?? "unknown",
    memGb: Math.round(totalmem() / 1e9 * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${process.arch}`
  }
}

const files = readdirSync(join(here, "rows")).filter((f) => /^\d+-.*\.mjs$/.test(f)).sort()
const modules = []
for (const file of files) modules.push((await import(pathToFileURL(join(here, "rows", file)).href)).default)
const selected = modules.filter((m) => only === undefined || only.has(m.id))

const startedAt = new Date().toISOString()
// Other work on the machine skews absolute figures (ratios less so): record the load around the run.
const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100)
const results = []
for (const row of selected) {
  process.stderr.write(`[bench] row ${row.id}: ${row.name}${quick ? " (quick)" : ""}\n`)
  const t = performance.now()
  try {
    const r = await row.run(settings)
    if (r.skipped !== undefined) {
      // a row that cannot run here (e.g. no Postgres): reported as not run, not as an error
      results.push({
        id: row.id,
        name: row.name,
        status: "skipped",
        pass: true,
        reason: r.skipped,
        seconds: Math.round((performance.now() - t) / 100) / 10,
        quick
      })
      process.stderr.write(`[bench] row ${row.id} not run: ${r.skipped}\n`)
      continue
    }
    results.push({
      id: row.id,
      name: row.name,
      status: "ok",
      pass: r.checks.every((c) => c.pass),
      ...r,
      seconds: Math.round((performance.now() - t) / 100) / 10,
      quick
    })
  } catch (error) {
    process.stderr.write(`[bench] row ${row.id} FAILED: ${error?.stack ?? error}\n`)
    results.push({
      id: row.id,
      name: row.name,
      status: "error",
      pass: false,
      error: String(error?.message ?? error).split("\n")[0].slice(0, 300),
      seconds: Math.round((performance.now() - t) / 100) / 10,
      quick
    })
  }
  process.stderr.write(`[bench] row ${row.id} done in ${results.at(-1).seconds} s\n`)
}
await closeShared()
killAll()
await closePg()

let output = {
  startedAt,
  finishedAt: new Date().toISOString(),
  quick,
  machine: machine(),
  loadAverage: { start: loadAtStart, end: loadavg().map((x) => Math.round(x * 100) / 100) },
  rows: results
}
// Each row keeps the run it was measured in, so that a table merged from several runs says which is which.
const thisRun = { at: output.finishedAt, cpu: output.machine.cpuModel, loadAverage: output.loadAverage, quick }
for (const r of results) r.run = thisRun
console.log("")
console.log(printTable(results))
console.log("")

if (write) {
  if (only !== undefined && existsSync(resultsFile)) {
    const previous = JSON.parse(readFileSync(resultsFile, "utf8"))
    const previousRun = {
      at: previous.finishedAt,
      cpu: previous.machine?.cpuModel,
      loadAverage: previous.loadAverage,
      quick: previous.quick
    }
    const merged = new Map(previous.rows.map((r) => [r.id, { ...r, run: r.run ?? previousRun }]))
    for (const r of results) merged.set(r.id, r)
    output = { ...output, startedAt: previous.startedAt, rows: [...merged.values()].sort((a, b) => a.id - b.id) }
  }
  writeFileSync(resultsFile, JSON.stringify(output, null, 2) + "\n")
  console.log(`wrote ${resultsFile}`)
  if (updateDocs(docsFile, output)) console.log(`updated the table in ${docsFile}`)
  else console.log(`docs/performance.md or its bench:results markers are missing; the table was not written there`)
} else {
  console.log("(--only/--quick: bench/results.json and docs/performance.md left as they are; add --write to merge)")
  if (args.includes("--markdown")) console.log(markdown(output))
}

const errors = results.filter((r) => r.status === "error")
if (errors.length > 0) {
  console.error(`[bench] ${errors.length} row(s) failed to run: ${errors.map((r) => r.id).join(", ")}`)
  process.exit(1)
}
process.exit(0)
