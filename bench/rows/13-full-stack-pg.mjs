// Row 13 (issue #35's "row 1 on Postgres"): row 1's read (a sandbox connection's
// GET …/packages?per_page=100 through the whole stack) on a server whose database is Postgres, against
// the same minimal Fastify server answering the identical bytes, and beside it, in the same run, the
// same read on row 1's SQLite server (informative: the Postgres server's share of it). The database
// is BENCH_DATABASE_URL or TEST_DATABASE_URL, else a throwaway cluster (`lib/pg.mjs`); without
// Postgres the row is reported as not run.
import { packagesPath, startApi } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { freshSchema, pgDatabase } from "../lib/pg.mjs"
import { readServer } from "../lib/shared.mjs"
import { ms, round, rps } from "../lib/stats.mjs"
import { startFastify } from "./01-full-stack.mjs"

export default {
  id: 13,
  name: "GET packages?per_page=100 (row 1) with the server on Postgres vs Fastify (same bytes)",
  async run({ load: settings, log }) {
    const database = await pgDatabase()
    if (database.skip !== undefined) return { skipped: database.skip }
    const { url } = await freshSchema(database.url)
    let server
    let fastify
    try {
      server = await startApi({ DATABASE_URL: url })
      const best = await packagesPath(server)
      const body = best.answer.text
      const contentType = best.answer.headers.get("content-type")
      fastify = await startFastify(body, contentType)
      const sqlite = await readServer()
      log(`ours on Postgres: ${best.path} (${best.count} packages, ${body.length} bytes)`)
      const ours = await load({
        ...settings,
        url: `${server.api}${best.path}`,
        headers: { authorization: `Bearer ${server.token}` }
      })
      if (ours.failure) {
        throw new Error(
          `Tracebridge on Postgres answered non-2xx or failed under load: ${ours.failure}; ${server.describe()}`
        )
      }
      log(`ours on Postgres: ${rps(ours.rps)}, p99 ${ms(ours.p99)}; now Fastify`)
      const base = await load({ ...settings, url: `${fastify.url}${best.path}` })
      if (base.failure) throw new Error(`the Fastify baseline failed under load: ${base.failure}`)
      log(`Fastify: ${rps(base.rps)}; now the same read on SQLite`)
      const lite = await load({
        ...settings,
        url: `${sqlite.server.api}${sqlite.path}`,
        headers: { authorization: `Bearer ${sqlite.server.token}` }
      })
      if (lite.failure) throw new Error(`Tracebridge on SQLite failed under load: ${lite.failure}`)
      const ratio = ours.rps / base.rps
      return {
        measured: `on Postgres ${rps(ours.rps)}, p50 ${ms(ours.p50)}, p99 ${ms(ours.p99)}`,
        baseline: `Fastify ${rps(base.rps)}, p99 ${ms(base.p99)}; on SQLite ${rps(lite.rps)} (${
          round(lite.rps / base.rps, 3)
        }×), p99 ${ms(lite.p99)}`,
        ratio,
        checks: [
          { what: "throughput ratio", value: round(ratio, 3), target: ">= 0.5", pass: ratio >= 0.5 },
          { what: "p99 (ms)", value: ours.p99, target: "<= 25", pass: ours.p99 <= 25 },
          { what: "non-2xx", value: ours.non2xx, target: "== 0", pass: ours.non2xx === 0 }
        ],
        note:
          `Database: ${database.source}, a fresh schema. ${best.count} packages, ${body.length}-byte body; row 1's ` +
          `targets. Loaded in turn: the Postgres server, Fastify with its bytes, row 1's SQLite server (same ` +
          `settings: autocannon ${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s); ` +
          `${ours.requests} requests measured on Postgres, all 2xx. Ratio = Postgres / Fastify req/s; Postgres / SQLite ` +
          `in this run: ${round(ours.rps / lite.rps, 3)}.`,
        data: { ours, baseline: base, sqlite: lite, bodyBytes: body.length, packages: best.count }
      }
    } finally {
      if (fastify !== undefined) await fastify.stop()
      if (server !== undefined) await server.stop()
    }
  }
}
