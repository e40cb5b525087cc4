// The results table: printed to the terminal, and rewritten into docs/performance.md between
// `<!-- bench:results:start -->` and `<!-- bench:results:end -->`.
import { existsSync, readFileSync, writeFileSync } from "node:fs"

const START = "<!-- bench:results:start -->"
const END = "<!-- bench:results:end -->"

const fmtRatio = (r) => (r === undefined || r === null || !Number.isFinite(r) ? "–" : r.toFixed(r >= 10 ? 1 : 3))

/** One line per row: the cells of the table. */
export const cells = (row) => {
  if (row.status === "error") {
    return [String(row.id), row.name, `ERROR: ${row.error}`, "–", "–", row.target ?? "–", "ERROR"]
  }
  if (row.status === "skipped") return [String(row.id), row.name, `not run: ${row.reason}`, "–", "–", "–", "NOT RUN"]
  const target = row.checks.map((c) => `${c.what} ${c.target}`).join("; ")
  const misses = row.checks.filter((c) => !c.pass).map((c) => `${c.what} ${c.value}`)
  return [
    String(row.id),
    row.name,
    row.measured,
    row.baseline,
    fmtRatio(row.ratio),
    target,
    misses.length === 0 ? "pass" : `MISS (${misses.join("; ")})`
  ]
}

const HEAD = ["#", "row", "measured", "baseline", "ratio", "target", "result"]

export const printTable = (rows) => {
  const lines = [HEAD, ...rows.map(cells)]
  const width = HEAD.map((_, i) => Math.min(70, Math.max(...lines.map((l) => l[i].length))))
  const fit = (text, w) => (text.length > w ? text.slice(0, w - 1) + "…" : text.padEnd(w))
  const out = []
  for (const [n, line] of lines.entries()) {
    out.push(line.map((c, i) => fit(c, width[i])).join(" | "))
    if (n === 0) out.push(width.map((w) => "-".repeat(w)).join("-|-"))
  }
  return out.join("\n")
}

const escape = (text) => text.replaceAll("|", "\\|")

/** "rows 1, 7 and 13" */
const rowList = (ids) =>
  `${ids.length === 1 ? "row" : "rows"} ${
    ids.length === 1 ? ids[0] : `${ids.slice(0, -1).join(", ")} and ${ids.at(-1)}`
  }`

const load = (run) =>
  `1-minute load average ${run.loadAverage?.start?.[0] ?? "?"} at the start and ${
    run.loadAverage?.end?.[0] ?? "?"
  } at the end`

/**
 * The header: the run, or, for a table merged from several runs (`--only … --write`), which rows
 * each run measured, newest first.
 */
const header = (results) => {
  const m = results.machine
  const runs = new Map()
  for (const row of results.rows) {
    const run = row.run ?? { at: results.finishedAt, cpu: m.cpuModel, loadAverage: results.loadAverage }
    const entry = runs.get(run.at) ?? { run, ids: [] }
    entry.ids.push(row.id)
    runs.set(run.at, entry)
  }
  if (runs.size <= 1) {
    return `Last full run: ${results.finishedAt} on ${m.cpus}× ${m.cpuModel}, ${m.memGb} GB, Node ${m.node}` +
      `${results.quick ? " (**--quick**: shorter durations)" : ""}; ${load(results)}. `
  }
  const parts = [...runs.values()].sort((a, b) => (a.run.at < b.run.at ? 1 : -1)).map(({ ids, run }) =>
    `${rowList(ids)} on ${run.at} (${run.cpu ?? "?"}${run.quick ? ", **--quick**" : ""}; ${load(run)})`
  )
  return `Rows from ${runs.size} runs (\`--only … --write\` merges): ${parts.join("; ")}. ` +
    `Node ${m.node}, ${m.cpus} cores, ${m.memGb} GB. `
}

export const markdown = (results) => {
  const lines = [
    `${header(results)}Raw figures: [\`bench/results.json\`](../bench/results.json).`,
    "",
    `| ${HEAD.join(" | ")} |`,
    `|${HEAD.map(() => "---").join("|")}|`,
    ...results.rows.map((row) => `| ${cells(row).map(escape).join(" | ")} |`),
    "",
    "Notes per row:",
    "",
    ...results.rows.map((row) =>
      `${row.id}. ${
        escape(
          row.status === "error"
            ? `error: ${row.error}`
            : row.status === "skipped"
            ? `not run: ${row.reason}`
            : row.note ?? ""
        )
      }`
    )
  ]
  return lines.join("\n")
}

/** Rewrites the table between the markers; returns false when the file or markers are missing. */
export const updateDocs = (file, results) => {
  if (!existsSync(file)) return false
  const text = readFileSync(file, "utf8")
  const a = text.indexOf(START)
  const b = text.indexOf(END)
  if (a < 0 || b < a) return false
  const next = `${text.slice(0, a + START.length)}\n${markdown(results)}\n${text.slice(b)}`
  if (next !== text) writeFileSync(file, next)
  return true
}
