// Row 12 (issue #35's "row 10"): a production facility's package list, 100 per page, served from
// the synced store on Postgres (GET /v1/connections/{id}/facilities/{fac}/packages?per_page=100
// through the whole stack: auth, rate limiter, the facility check, the store read, the envelope),
// against a minimal Fastify server with `pg` reading and encoding the same rows from the same
// schema, in one run.
//
// The production connection is real: the server (on a fresh Postgres schema) points provider_a's
// production connections at the standalone emulator (`counting-sandbox.mjs`, what
// `tracebridge-sandbox` runs, with Metrc's limit of 50 GET/s per facility), a production
// organisation links the emulator's good login through the Connect routes, and the managed sync
// the link starts is waited for until every facility is live (a backfill over the emulator's
// wire, at its rate limit). The database is BENCH_DATABASE_URL or TEST_DATABASE_URL, else a
// throwaway cluster (`lib/pg.mjs`); without Postgres the row is reported as not run.
import { fileURLToPath } from "node:url"
import { call, startApi } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { freshSchema, pgDatabase } from "../lib/pg.mjs"
import { freePort, start, until } from "../lib/proc.mjs"
import { linkProduction, syncedLive } from "../lib/production.mjs"
import { ms, round, rps } from "../lib/stats.mjs"

const sandboxScript = fileURLToPath(new URL("../lib/counting-sandbox.mjs", import.meta.url))
const baselineScript = fileURLToPath(new URL("../lib/store-fastify-pg-server.mjs", import.meta.url))
/** Packages of the emulator's cultivator: more than a page of 100 are live after the backfill. */
const PACKAGES = 150
const PER_PAGE = 100

/** The standalone emulator at Metrc's limit; its origin. */
export const startEmulator = async (packages = PACKAGES) => {
  const proc = start(process.execPath, [sandboxScript, "50", String(packages)])
  const ready = await until("the standalone emulator to listen", () => {
    if (!proc.alive()) throw new Error(`the emulator exited early:\n${proc.output()}`)
    return /^ready (\S+) (\S+)$/m.exec(proc.output())
  }, 30_000)
  return { origin: ready[1], counts: ready[2], stop: () => proc.stop() }
}

const startBaseline = async (url, contentType) => {
  const port = await freePort()
  const proc = start(process.execPath, [baselineScript, String(port), url, contentType])
  await until("the Fastify + pg server to start", () => {
    if (!proc.alive()) throw new Error(`the Fastify + pg server exited early:\n${proc.output()}`)
    return /^ready$/m.test(proc.output())
  })
  return { url: `http://127.0.0.1:${port}`, stop: () => proc.stop() }
}

export default {
  id: 12,
  name: "production package list, 100 per page, from the synced store on Postgres vs Fastify + pg (same rows)",
  async run({ load: settings, log }) {
    const database = await pgDatabase()
    if (database.skip !== undefined) return { skipped: database.skip }
    const { url } = await freshSchema(database.url)
    let emulator
    let server
    let baseline
    try {
      emulator = await startEmulator()
      server = await startApi({
        DATABASE_URL: url,
        TRACEBRIDGE_PROVIDER_A_BASE_URL: `${emulator.origin}/provider_a/{state}`,
        PROVIDER_A_VENDOR_KEY: "bench-vendor-key"
      })
      const linkedAt = performance.now()
      const { connection, token } = await linkProduction(server, { DATABASE_URL: url })
      const sync = await syncedLive(server, token, connection, 900_000, log)
      const syncSeconds = (performance.now() - linkedAt) / 1000
      const upstream = await fetch(`${emulator.counts}/counts`).then((r) => r.json())
      const sizes = sync.facilities.map((f) => ({
        id: f.facility_id,
        packages: f.resources.find((r) => r.type === "packages")?.count ?? 0
      })).sort((a, b) => b.packages - a.packages)
      const facility = sizes[0].id
      log(
        `sync live after ${round(syncSeconds, 1)} s (${upstream.requests} upstream requests); packages per facility: ${
          sizes.map((s) => s.packages).join(", ")
        }`
      )

      const path = `/v1/connections/${connection}/facilities/${facility}/packages?per_page=${PER_PAGE}`
      const answer = await call(server.api, "GET", path, token)
      if (answer.status !== 200) throw new Error(`GET ${path}: ${answer.status} ${answer.text.slice(0, 300)}`)
      if (answer.body.data.length !== PER_PAGE) {
        throw new Error(`the largest facility's first page has ${answer.body.data.length} packages, not ${PER_PAGE}`)
      }
      if (answer.body.meta.sync?.status !== "live") {
        throw new Error(`the page is not served from the live store: meta ${JSON.stringify(answer.body.meta)}`)
      }
      const contentType = answer.headers.get("content-type")
      baseline = await startBaseline(url, contentType)
      const theirs = await fetch(`${baseline.url}${path}`)
      const theirText = await theirs.text()
      if (theirs.status !== 200) throw new Error(`the Fastify + pg server answered ${theirs.status}: ${theirText}`)
      const theirBody = JSON.parse(theirText)
      if (JSON.stringify(theirBody.data) !== JSON.stringify(answer.body.data)) {
        throw new Error("the Fastify + pg server's data differs from the API's")
      }
      const shape = (b) => `${Object.keys(b).join(",")} meta:${Object.keys(b.meta).join(",")}`
      if (
        shape(theirBody) !== shape(answer.body) ||
        JSON.stringify(theirBody.pagination) !== JSON.stringify(answer.body.pagination) ||
        theirs.headers.get("content-type") !== contentType
      ) {
        throw new Error(
          `the answers' shapes differ: ${shape(answer.body)} vs ${shape(theirBody)}; pagination ${
            JSON.stringify(answer.body.pagination)
          } vs ${JSON.stringify(theirBody.pagination)}; content type ${contentType} vs ${
            theirs.headers.get("content-type")
          }`
        )
      }
      log(
        `facility ${facility}: ${answer.text.length} bytes (Fastify's ${theirText.length}); equal data and pagination`
      )

      const ours = await load({
        ...settings,
        url: `${server.api}${path}`,
        headers: { authorization: `Bearer ${token}` }
      })
      if (ours.failure) {
        throw new Error(`Tracebridge answered non-2xx or failed under load: ${ours.failure}; ${server.describe()}`)
      }
      log(`ours: ${rps(ours.rps)}, p99 ${ms(ours.p99)}; now Fastify + pg`)
      const base = await load({ ...settings, url: `${baseline.url}${path}` })
      if (base.failure) throw new Error(`the Fastify + pg baseline failed under load: ${base.failure}`)
      const ratio = ours.rps / base.rps
      return {
        measured: `${rps(ours.rps)}, p50 ${ms(ours.p50)}, p99 ${ms(ours.p99)}`,
        baseline: `Fastify + pg on the same schema ${rps(base.rps)}, p50 ${ms(base.p50)}, p99 ${ms(base.p99)}`,
        ratio,
        checks: [
          { what: "throughput ratio", value: round(ratio, 3), target: ">= 0.5", pass: ratio >= 0.5 },
          { what: "non-2xx", value: ours.non2xx, target: "== 0", pass: ours.non2xx === 0 }
        ],
        note: `Database: ${database.source}, a fresh schema. A production provider_a connection (CO, the emulator's ` +
          `good login, linked through the Connect routes by a production organisation made with the operator CLI) ` +
          `against the standalone emulator in a child process (seed 42, ${PACKAGES} packages for the cultivator, ` +
          `50 GET/s per facility); its managed sync was live after ${
            round(syncSeconds, 1)
          } s and ${upstream.requests} ` +
          `upstream requests. Measured: the facility with the most packages (${sizes[0].packages} stored), page 1 of ` +
          `${PER_PAGE}, ${answer.text.length} bytes, meta.sync.status live (served from the store, no upstream call). ` +
          `Baseline: Fastify 5 with pg (a pool of 10) on the same schema; per request the connection, the facility's ` +
          `and the list's sync state, the count and the ${PER_PAGE} rows, statements prepared once, stored bodies ` +
          `spliced; the same data, pagination and meta members (checked); no authentication or rate limit. autocannon ` +
          `${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s; ${ours.requests} ` +
          `requests measured (ours), all 2xx. Ratio = ours / Fastify + pg req/s.`,
        data: {
          ours,
          baseline: base,
          facility,
          packages: sizes[0].packages,
          syncSeconds,
          upstream,
          bodyBytes: answer.text.length
        }
      }
    } finally {
      if (baseline !== undefined) await baseline.stop()
      if (server !== undefined) await server.stop()
      if (emulator !== undefined) await emulator.stop()
    }
  }
}
