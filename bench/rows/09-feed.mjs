// Row 9: the change feed read from the synced store, a page of 100 changes
// (GET /v1/connections/{id}/facilities/{fac}/changes?limit=100) through the whole stack, against a
// minimal Fastify server answering the same rows from the same database file.
//
// A server of its own (not the shared one of rows 1 and 7: its sync would run beside their
// load), spawned with TRACEBRIDGE_SANDBOX_SIZE=large (the default world's largest facility stores
// fewer than 100 objects) and a data folder the row chooses, so that the baseline can open its
// `tracebridge.db`. The row links the sandbox connection (`startApi`), starts its sync with
// GET /v1/connections/{id}/sync, waits until every facility is `live`, and takes the facility that
// stored the most objects. The measured page is its second page of 100 (the cursor the first page
// hands over) when it has one, else its first. Both servers are child processes; autocannon runs
// in the bench process at the suite's settings. Before loading, the `data` arrays of both answers
// are checked to be equal.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { call, startApi } from "../lib/api.mjs"
import { load } from "../lib/load.mjs"
import { freePort, start, until } from "../lib/proc.mjs"
import { ms, round, rps } from "../lib/stats.mjs"

const baselineScript = fileURLToPath(new URL("../lib/feed-fastify-server.mjs", import.meta.url))
const LIMIT = 100
/** The sandbox worlds' size: the default one's largest facility stores fewer than 100 objects. */
const SIZE = "large"

const startBaseline = async (dbFile, contentType, encryptionKey) => {
  const port = await freePort()
  const proc = start(process.execPath, [baselineScript, String(port), dbFile, contentType], {
    env: { ...process.env, TRACEBRIDGE_ENCRYPTION_KEY: encryptionKey }
  })
  await until("the Fastify feed server to start", () => {
    if (!proc.alive()) throw new Error(`the Fastify feed server exited early:\n${proc.output()}`)
    return /^ready$/m.test(proc.output())
  })
  return { url: `http://127.0.0.1:${port}`, stop: () => proc.stop(), proc }
}

export default {
  id: 9,
  name: "feed page of 100 changes from the store, whole stack vs Fastify (same rows, same database)",
  async run({ load: settings, log }) {
    const dataDir = mkdtempSync(join(tmpdir(), "tb-bench-feed-"))
    let server
    let baseline
    try {
      server = await startApi({ TRACEBRIDGE_DATA_DIR: dataDir, TRACEBRIDGE_SANDBOX_SIZE: SIZE })
      const get = async (path) => {
        const answer = await call(server.api, "GET", path, server.token)
        if (answer.status !== 200) {
          throw new Error(`GET ${path}: ${answer.status} ${answer.text.slice(0, 300)}\n${server.describe()}`)
        }
        return answer
      }
      // The sync: started by its first GET, then polled until every facility is live.
      const syncPath = `/v1/connections/${server.connection}/sync`
      const sync = await until(
        "every facility of the connection to be live",
        async () => {
          const answer = await get(syncPath)
          const facilities = answer.body.data.facilities
          return facilities.length > 0 && facilities.every((f) => f.status === "live") ? answer.body.data : undefined
        },
        120_000,
        200
      )
      const sizes = sync.facilities.map((f) => ({
        id: f.facility_id,
        objects: f.resources.reduce((n, r) => n + r.count, 0)
      })).sort((a, b) => b.objects - a.objects)
      const facility = sizes[0].id
      log(`sync live; objects per facility: ${sizes.map((s) => s.objects).join(", ")}`)

      const changesPath = `/v1/connections/${server.connection}/facilities/${facility}/changes?limit=${LIMIT}`
      const first = await get(changesPath)
      let path = changesPath
      let answer = first
      if (first.body.meta.has_more) {
        const second = await get(`${changesPath}&cursor=${first.body.meta.next_cursor}`)
        if (second.body.data.length === LIMIT) {
          path = `${changesPath}&cursor=${first.body.meta.next_cursor}`
          answer = second
        }
      }
      if (answer.body.data.length !== LIMIT) {
        throw new Error(`the largest facility's feed page has ${answer.body.data.length} changes, not ${LIMIT}`)
      }
      const seqs = answer.body.data.map((c) => Number(c.id.slice("chg_".length)))
      const contentType = answer.headers.get("content-type")

      baseline = await startBaseline(join(dataDir, "tracebridge.db"), contentType, server.encryptionKey)
      const theirs = await fetch(`${baseline.url}${path}`)
      const theirText = await theirs.text()
      if (theirs.status !== 200) throw new Error(`the Fastify feed server answered ${theirs.status}: ${theirText}`)
      const theirBody = JSON.parse(theirText)
      if (JSON.stringify(theirBody.data) !== JSON.stringify(answer.body.data)) {
        throw new Error("the Fastify feed server's data differs from the API's")
      }
      const ourKeys = Object.keys(answer.body.meta).join(",")
      const theirKeys = Object.keys(theirBody.meta).join(",")
      if (ourKeys !== theirKeys || theirs.headers.get("content-type") !== contentType) {
        throw new Error(
          `the answers' shapes differ: meta ${ourKeys} vs ${theirKeys}; content type ${contentType} vs ${
            theirs.headers.get("content-type")
          }`
        )
      }
      log(
        `facility ${facility}: changes chg_${seqs[0]}…chg_${
          seqs.at(-1)
        }, ${answer.text.length} bytes (Fastify's ${theirText.length}); equal data`
      )

      const ours = await load({
        ...settings,
        url: `${server.api}${path}`,
        headers: { authorization: `Bearer ${server.token}` }
      })
      if (ours.failure) {
        throw new Error(`Tracebridge answered non-2xx or failed under load: ${ours.failure}; ${server.describe()}`)
      }
      log(`ours: ${rps(ours.rps)}, p99 ${ms(ours.p99)}; now Fastify`)
      const base = await load({ ...settings, url: `${baseline.url}${path}` })
      if (base.failure) throw new Error(`the Fastify feed baseline failed under load: ${base.failure}`)
      const ratio = ours.rps / base.rps
      return {
        measured: `${rps(ours.rps)}, p50 ${ms(ours.p50)}, p99 ${ms(ours.p99)}`,
        baseline: `Fastify + libsql on the same file ${rps(base.rps)}, p50 ${ms(base.p50)}, p99 ${ms(base.p99)}`,
        ratio,
        checks: [
          { what: "throughput ratio", value: round(ratio, 3), target: ">= 0.5", pass: ratio >= 0.5 },
          { what: "non-2xx", value: ours.non2xx, target: "== 0", pass: ours.non2xx === 0 }
        ],
        note: `The sandbox connection's sync (started by GET …/sync, waited for until every facility was live) ` +
          `stored ${
            sizes[0].objects
          } objects for the largest facility (TRACEBRIDGE_SANDBOX_SIZE=${SIZE}); the page measured is ${
            path.includes("cursor=") ? "its second page (the first page's next_cursor)" : "its first page"
          }, changes chg_${seqs[0]} to chg_${
            seqs.at(-1)
          }, ${answer.text.length} bytes (Fastify's ${theirText.length}; the data arrays checked equal, meta with the same members). Baseline: Fastify 5 on its own libsql ` +
          `connection to the same tracebridge.db (PRAGMA query_only); per request the connection's provider and ` +
          `state, the facility's sync state and the feed rows (LIMIT ${LIMIT + 1}), ` +
          `statements prepared once, bodies spliced as the API does; no authentication or rate limit. autocannon ` +
          `${settings.connections} connections, ${settings.warmup} s warm-up + ${settings.duration} s; ${ours.requests} ` +
          `requests measured (ours), all 2xx. Ratio = ours / Fastify req/s; p99 reported, not a target.`,
        data: {
          ours,
          baseline: base,
          facility,
          objects: sizes[0].objects,
          cursor: path.includes("cursor="),
          firstSeq: seqs[0],
          lastSeq: seqs.at(-1),
          bodyBytes: answer.text.length
        }
      }
    } finally {
      if (baseline !== undefined) await baseline.stop()
      if (server !== undefined) await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}
