// Row 14 (issue #35's "row 11"): the managed sync at scale. 1,000 live production facilities on
// the strict provider_a emulator, polled every 30 s by two API nodes on one Postgres, for 5 minutes
// (--quick: 90 s): sync lag, polls due against polls done, CPU per poll, upstream 429s.
//
// - The emulator: the standalone sandbox (`Standalone.start`, as `tracebridge-sandbox` runs it) in a
//   child process of its own with its default, Metrc's, limits: 50 GET/s per facility and 150 per
//   vendor key, a 429 with `Retry-After` past them (`bench/lib/counting-sandbox.mjs`, which counts
//   every request and status it answers). Production connections reach it as a state system:
//   `TRACEBRIDGE_PROVIDER_A_BASE_URL` and a vendor key.
// - The nodes: two `packages/http/dist/main.js` processes on one fresh Postgres schema
//   (`BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else a throwaway cluster, `lib/pg.mjs`; without Postgres the row is reported as not run),
//   `TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS=30`, a one-day backfill horizon (the backfill is setup
//   here, not what is measured), `/metrics` on a port of their own.
// - The facilities: each sandbox login (`user_good…`) is a world of its own, and the world of a CO
//   login has a fixed set of facilities (a cultivator, a manufacturer, a lab, a dispensary, a
//   medical dispensary), so the row links as many logins as make 1,000 facilities, through the
//   Connect flow an integrator's user goes through (link token, Connect page session, submit,
//   exchange), alternating the nodes, and waits until every facility is `live`.
// - The measure: from the moment every facility is live, for the window: every 2 s the bench reads
//   `sync_facilities` (lag = now − last_synced_at of each live facility; a changed last_synced_at
//   is a poll done), both nodes' CPU from /proc, the emulator's counts, and both nodes' /metrics.
//   Polls due = facilities × window ÷ interval; missed = due − done when positive.
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import pg from "pg"
import { call, cli, expect, root, startServer } from "../lib/api.mjs"
import { freshSchema, pgDatabase } from "../lib/pg.mjs"
import { freePort, sleep, start, until } from "../lib/proc.mjs"
import { median, percentile, round } from "../lib/stats.mjs"

const run = promisify(execFile)
const emulatorScript = fileURLToPath(new URL("../lib/counting-sandbox.mjs", import.meta.url))

/** The emulator's limit per facility and second (Metrc's; 3× per vendor key). */
const RATE = 50
/** The small world's cultivator holds 40 packages (the sandbox's default size). */
const PACKAGES = 40
const INTERVAL_SECONDS = 30
const VENDOR_KEY = "tracebridge-bench-sync-vendor-key"
/** How many facilities, by default; BENCH_SYNC_FACILITIES overrides it (development). */
const FACILITIES = Number(process.env.BENCH_SYNC_FACILITIES ?? 1000)
/** How long the backfills may take before the row reports how far they got (BENCH_SYNC_BACKFILL_MINUTES). */
const BACKFILL_MINUTES = Number(process.env.BENCH_SYNC_BACKFILL_MINUTES ?? 15)
/** Samples of the store during the window. */
const SAMPLE_EVERY_MS = 2_000

/** CPU seconds (user + system) a process has used so far (Linux /proc). */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** The sum of a Prometheus counter's samples (every label set), or 0 when it has none yet. */
const counterOf = (text, name, labels = "") =>
  text.split("\n")
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .filter((l) => labels === "" || l.includes(labels))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(" ") + 1)), 0)

const startEmulator = async () => {
  const proc = start(process.execPath, [emulatorScript, String(RATE), String(PACKAGES)])
  const line = await until("the emulator to listen", () => {
    if (!proc.alive()) throw new Error(`the emulator exited early:\n${proc.output().slice(-2000)}`)
    return /^ready (\S+) (\S+)$/m.exec(proc.output())
  }, 30_000)
  const [, origin, countsOrigin] = line
  const counts = (what = "counts") =>
    fetch(`${countsOrigin}/${what}`, { method: what === "reset" ? "POST" : "GET" }).then((r) => r.json())
  return { proc, origin, counts }
}

/** A fresh schema on the database at `url`: its URL (search_path set) and a drop. */
/** `tracebridge-admin` against the database: its stdout. */
const admin = async (env, ...args) => (await run(process.execPath, [cli, ...args], { cwd: root, env })).stdout

/** Connect submits answered 504 (the login's check waited behind the backfills in the vendor key's bucket). */
let submitTimeouts = 0

/**
 * One login linked through Connect on `node`: the connection id. A submit whose check of the login
 * timed out upstream (504) is tried again with a new link token, as the user would.
 */
const linkLogin = async (node, token, userKey) => {
  for (let attempt = 1;; attempt++) {
    try {
      return await linkOnce(node, token, userKey)
    } catch (error) {
      if (!/got 504/.test(String(error?.message)) || attempt >= 5) throw error
      submitTimeouts++
    }
  }
}

const linkOnce = async (node, token, userKey) => {
  const link = expect(await call(node.api, "POST", "/v1/link/token/create", token, {}), 200, "link token").body.data
  const session = expect(
    await call(node.api, "GET", `/connect/session?link_token=${encodeURIComponent(link.link_token)}`),
    200,
    "Connect session"
  ).body.data
  const submitted = expect(
    await call(node.api, "POST", "/connect/submit", undefined, {
      link_token: link.link_token,
      link_session_id: session.link_session_id,
      provider: "provider_a",
      state: "CO",
      credentials: { user_key: userKey }
    }),
    200,
    "Connect submit"
  ).body.data
  const exchanged = expect(
    await call(node.api, "POST", "/v1/link/token/exchange", token, { public_token: submitted.public_token }),
    200,
    "exchange"
  ).body.data
  return exchanged.connection_id
}

export default {
  id: 14,
  name: "the sync at scale (issue #35's row 11): 1,000 production facilities, 2 nodes, 30 s polls",
  async run({ log, quick }) {
    // BENCH_DATABASE_URL, else TEST_DATABASE_URL, else a throwaway cluster (lib/pg.mjs); none: not run
    const database = await pgDatabase()
    if (database.skip !== undefined) return { skipped: database.skip }
    const windowSeconds = quick ? 90 : 300
    // dropped by the bench's `closePg` at the end of the run
    const schema = await freshSchema(database.url, "bench_sync")
    const emulator = await startEmulator()
    const nodes = []
    const sampler = new pg.Client({ connectionString: schema.url })
    try {
      await sampler.connect()
      const metricsPorts = [await freePort(), await freePort()]
      const env = {
        DATABASE_URL: schema.url,
        TRACEBRIDGE_ENCRYPTION_KEY: randomBytes(32).toString("base64"),
        TRACEBRIDGE_PROVIDER_A_BASE_URL: `${emulator.origin}/provider_a/{state}`,
        PROVIDER_A_VENDOR_KEY: VENDOR_KEY,
        TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
        TRACEBRIDGE_SYNC_HORIZON_DAYS: "1",
        TRACEBRIDGE_REQUEST_LOG: "off"
      }
      nodes.push(await startServer({ ...env, TRACEBRIDGE_METRICS_PORT: String(metricsPorts[0]) }))
      // The organisation on the production plan and its client, with the operator CLI.
      const cliEnv = { ...process.env, ...env, NODE_ENV: "production", TRACEBRIDGE_DATA_DIR: nodes[0].dataDir }
      const org = (await admin(cliEnv, "create-org", "bench-sync", "--plan", "production")).split("\t")[0]
      const created = await admin(cliEnv, "create-client", org)
      const client_id = /client_id=(\S+)/.exec(created)[1]
      const client_secret = /client_secret=(\S+)/.exec(created)[1]
      nodes.push(await startServer({ ...env, TRACEBRIDGE_METRICS_PORT: String(metricsPorts[1]) }))
      const token = expect(
        await call(nodes[0].api, "POST", "/v1/oauth/token", undefined, {
          grant_type: "client_credentials",
          client_id,
          client_secret,
          scope: "production"
        }),
        200,
        "POST /v1/oauth/token"
      ).body.access_token

      // The logins: the first tells how many facilities a world has.
      const t0 = Date.now()
      const first = await linkLogin(nodes[0], token, "user_good_bench_0")
      const perLogin = expect(
        await call(nodes[0].api, "GET", `/v1/connections/${first}/facilities`, token),
        200,
        "GET facilities"
      ).body.data.length
      const logins = Math.ceil(FACILITIES / perLogin)
      const connections = [first]
      let next = 1
      const linker = async () => {
        while (next < logins) {
          const i = next++
          connections.push(await linkLogin(nodes[i % 2], token, `user_good_bench_${i}`))
        }
      }
      await Promise.all([linker(), linker(), linker(), linker()])
      const total = logins * perLogin
      log(
        `${logins} logins linked (${perLogin} facilities each, ${total} in all) in ${
          round((Date.now() - t0) / 1000, 1)
        } s`
      )

      // Every facility live (the backfills are the setup, not the measure), for at most
      // BACKFILL_MINUTES: past the capacity of one vendor key (docs/performance.md, "Capacity
      // model"; ADR 0034) the live facilities' polls take the budget the backfills need, and they
      // would not finish within the hour. The row then reports how far they got, as a miss.
      const t1 = Date.now()
      let lastLog = 0
      let by = {}
      let snapshots = 0
      for (;;) {
        const { rows } = await sampler.query(
          "SELECT status, count(*)::int AS n FROM sync_facilities GROUP BY status"
        )
        by = Object.fromEntries(rows.map((r) => [r.status, r.n]))
        // The production webhook poller's first pass of a connection reads its transfer and
        // package lists whole (its baseline, WebhookPoller.ts), a few hundred GETs a connection,
        // then only what changed. The window measures the steady state after it.
        snapshots = (await sampler.query("SELECT count(*)::int AS n FROM poll_snapshots")).rows[0].n
        if (Date.now() - lastLog > 15_000) {
          lastLog = Date.now()
          log(
            `backfills: ${JSON.stringify(by)}, webhook baselines ${snapshots} of ${logins} after ${
              round((Date.now() - t1) / 1000)
            } s`
          )
        }
        for (const n of nodes) if (!n.proc.alive()) throw new Error(n.describe())
        if ((by.live ?? 0) === total && snapshots >= logins) break
        if (Date.now() - t1 > BACKFILL_MINUTES * 60_000) {
          const counts = await emulator.counts()
          const seconds = (Date.now() - t1) / 1000
          const limited = counts.statuses["429"] ?? 0
          return {
            measured: `${by.live ?? 0} of ${total} facilities live (${snapshots} of ${logins} webhook baselines) ` +
              `after ${BACKFILL_MINUTES} min of backfills; ` +
              `${round(counts.requests / seconds, 1)} upstream GET/s; ${limited} × 429`,
            baseline: `targets: p99 lag ≤ ${1.5 * INTERVAL_SECONDS} s (1.5 × ${INTERVAL_SECONDS} s); 0 missed; 0 × 429`,
            ratio: null,
            checks: [
              { what: "facilities live", value: by.live ?? 0, target: `== ${total}`, pass: false },
              { what: "upstream 429s", value: limited, target: "== 0", pass: limited === 0 }
            ],
            note:
              `${total} facilities (${logins} provider_a CO logins linked through Connect, ${perLogin} each) on two ` +
              `nodes, one vendor key at Metrc's limits: after ${BACKFILL_MINUTES} min of backfills ` +
              `${JSON.stringify(by)}, ${counts.requests} upstream requests (statuses ${
                JSON.stringify(counts.statuses)
              }). ` +
              `Polling ${total} facilities every ${INTERVAL_SECONDS} s needs about ${
                Math.round(total * 18.5 / INTERVAL_SECONDS)
              } GET/s (18–23 GETs a poll), over what one vendor key allows (150/s, 114 for background work): see ` +
              `docs/performance.md's capacity model and ADR 0034. BENCH_SYNC_FACILITIES sets the count.`,
            data: { facilities: total, logins, perLogin, backfill: by, seconds: round(seconds, 1), upstream: counts }
          }
        }
        await sleep(1_000)
      }
      const backfillSeconds = (Date.now() - t1) / 1000
      const backfillCounts = await emulator.counts()
      log(
        `all ${total} live and ${logins} webhook baselines taken after ${
          round(backfillSeconds, 1)
        } s of backfills (${backfillCounts.requests} upstream requests, statuses ${
          JSON.stringify(backfillCounts.statuses)
        })`
      )

      const sizeOf = async () =>
        (await sampler.query(
          `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = $1 AND c.relkind = 'r'`,
          [schema.schema]
        )).rows[0].bytes
      const objects = (await sampler.query(
        "SELECT count(*)::int AS n, coalesce(sum(length(body)), 0)::bigint AS bytes FROM sync_objects"
      )).rows[0]
      const metrics = () =>
        Promise.all(metricsPorts.map((p) => fetch(`http://127.0.0.1:${p}/metrics`).then((r) => r.text())))

      // The window.
      await emulator.counts("reset")
      const metrics0 = await metrics()
      const size0 = Number(await sizeOf())
      const cpu0 = nodes.map((n) => cpuOf(n.proc.pid))
      const start0 = Date.now()
      const seen = new Map()
      const lags = []
      const worst = []
      let polls = 0
      let notLive = 0
      const sample = async () => {
        const { rows } = await sampler.query(
          "SELECT connection_id, facility_id, status, last_synced_at FROM sync_facilities"
        )
        const at = Date.now()
        let max = 0
        for (const r of rows) {
          const key = `${r.connection_id}/${r.facility_id}`
          const last = r.last_synced_at === null ? null : Number(r.last_synced_at)
          const before = seen.get(key)
          if (before !== undefined && last !== null && last !== before) polls++
          seen.set(key, last)
          if (r.status !== "live" || last === null) {
            notLive++
            continue
          }
          const lag = (at - last) / 1000
          lags.push(lag)
          if (lag > max) max = lag
        }
        worst.push(max)
      }
      await sample()
      polls = 0
      while (Date.now() - start0 < windowSeconds * 1000) {
        await sleep(SAMPLE_EVERY_MS)
        await sample()
        for (const n of nodes) if (!n.proc.alive()) throw new Error(n.describe())
      }
      const elapsed = (Date.now() - start0) / 1000
      const cpu = nodes.map((n, i) => cpuOf(n.proc.pid) - cpu0[i])
      const metrics1 = await metrics()
      const size1 = Number(await sizeOf())
      const upstream = await emulator.counts()

      const due = Math.floor(total * elapsed / INTERVAL_SECONDS)
      const missed = Math.max(0, due - polls)
      const p50 = percentile(lags, 50)
      const p99 = percentile(lags, 99)
      const max = Math.max(...lags)
      const limited = upstream.statuses["429"] ?? 0
      const limitedByNodes = metrics1.reduce(
        (sum, text, i) =>
          sum + counterOf(text, "tracebridge_upstream_rate_limited_total") -
          counterOf(metrics0[i], "tracebridge_upstream_rate_limited_total"),
        0
      )
      const pollPages = metrics1.map((text, i) =>
        counterOf(text, "tracebridge_sync_pages_stored_total", `phase="poll"`) -
        counterOf(metrics0[i], "tracebridge_sync_pages_stored_total", `phase="poll"`)
      )
      const pollFailures = metrics1.map((text, i) =>
        counterOf(text, "tracebridge_sync_poll_failures_total") -
        counterOf(metrics0[i], "tracebridge_sync_poll_failures_total")
      )
      const cpuSeconds = cpu[0] + cpu[1]
      const cpuPerPoll = polls === 0 ? NaN : cpuSeconds * 1000 / polls
      const requestsPerPoll = polls === 0 ? NaN : upstream.requests / polls
      const growth = (size1 - size0) / total / elapsed * 86_400
      const checks = [
        {
          what: "p99 lag (s)",
          value: round(p99, 1),
          target: `<= ${1.5 * INTERVAL_SECONDS}`,
          pass: p99 <= 1.5 * INTERVAL_SECONDS
        },
        { what: "polls missed", value: missed, target: "== 0", pass: missed === 0 },
        { what: "upstream 429s", value: limited, target: "== 0", pass: limited === 0 }
      ]
      const data = {
        facilities: total,
        logins,
        perLogin,
        intervalSeconds: INTERVAL_SECONDS,
        windowSeconds: round(elapsed, 1),
        backfillSeconds: round(backfillSeconds, 1),
        backfillRequests: backfillCounts.requests,
        backfillStatuses: backfillCounts.statuses,
        connectSubmitTimeouts: submitTimeouts,
        lag: { p50: round(p50, 1), p99: round(p99, 1), max: round(max, 1), samples: lags.length },
        worstPerSample: { median: round(median(worst), 1), max: round(Math.max(...worst), 1) },
        notLiveSamples: notLive,
        polls: { due, done: polls, missed },
        cpu: { nodeSeconds: cpu.map((c) => round(c, 1)), perPollMs: round(cpuPerPoll, 1) },
        upstream: {
          requests: upstream.requests,
          perSecond: round(upstream.requests / elapsed, 1),
          perPoll: round(requestsPerPoll, 1),
          statuses: upstream.statuses,
          limitedSeenByNodes: limitedByNodes,
          paths: upstream.paths
        },
        pollPagesByNode: pollPages,
        pollFailuresByNode: pollFailures,
        database: {
          bytesBefore: size0,
          bytesAfter: size1,
          growthPerFacilityPerDayBytes: round(growth, 0),
          objects: objects.n,
          objectBytes: Number(objects.bytes)
        }
      }
      log(JSON.stringify(data))
      return {
        measured:
          `lag p50 ${round(p50, 1)} s, p99 ${round(p99, 1)} s; ${polls} of ${due} polls due done (${missed} missed); ` +
          `${round(cpuPerPoll, 1)} ms CPU/poll; ${limited} × 429`,
        baseline: `targets: p99 lag ≤ ${1.5 * INTERVAL_SECONDS} s (1.5 × ${INTERVAL_SECONDS} s); 0 missed; 0 × 429`,
        ratio: null,
        checks,
        note:
          `${total} facilities (${logins} provider_a CO logins linked through Connect, ${perLogin} facilities each), ` +
          `two API nodes (dist/main.js) on one Postgres schema, TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS=${INTERVAL_SECONDS}; ` +
          `the standalone emulator in a child process at Metrc's limits (${RATE} GET/s per facility, ${3 * RATE} per ` +
          `vendor key, 429 with Retry-After past them). Backfills (one-day horizon) and the webhook poller's first pass of each connection (its baseline), the setup, took ${
            round(backfillSeconds)
          } s ` +
          `and ${backfillCounts.requests} upstream requests. Window ${
            round(elapsed)
          } s from the moment every facility ` +
          `was live and every baseline taken, sampled every ${
            SAMPLE_EVERY_MS / 1000
          } s from sync_facilities: lag = sample time − last_synced_at ` +
          `(${lags.length} samples; max ${
            round(max, 1)
          } s); polls done = last_synced_at changes; due = facilities × window ÷ ` +
          `interval. Upstream: ${upstream.requests} requests (${round(upstream.requests / elapsed, 1)}/s, ` +
          `${round(requestsPerPoll, 1)} per poll), statuses ${
            JSON.stringify(upstream.statuses)
          }; 429s the nodes counted ` +
          `(/metrics) ${limitedByNodes}. CPU: nodes ${
            cpu.map((c) => `${round(c, 1)} s`).join(" + ")
          } over the window ` +
          `(${round(cpuSeconds / elapsed * 100)}% of a core) ÷ polls. Poll pages stored per node (/metrics): ` +
          `${pollPages.join(" / ")}. Database: ${round((size1 - size0) / 1024)} KiB more over the window ` +
          `(${round(growth / 1024, 1)} KiB per facility per day at this rate of change).`,
        data
      }
    } finally {
      // development: BENCH_SYNC_LOGS=<dir> keeps the end of each node's output there
      if (process.env.BENCH_SYNC_LOGS) {
        nodes.forEach((n, i) => writeFileSync(join(process.env.BENCH_SYNC_LOGS, `node-${i}.log`), n.proc.output()))
      }
      await sampler.end().catch(() => undefined)
      for (const n of nodes) await n.stop().catch(() => undefined)
      await emulator.proc.stop()
    }
  }
}
