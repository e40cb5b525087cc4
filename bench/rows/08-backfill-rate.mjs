// Row 8: the managed sync's backfill of a 100,000-package facility through the provider_a
// emulator, set to Metrc's rate limit: the share of the limit's ceiling it reaches, and the 429s
// it meets.
//
// The emulator is a child process of its own (`bench/lib/counting-sandbox.mjs`: the standalone
// sandbox's `Standalone.start`, as `tracebridge-sandbox --size 100000 --requests-per-second 50`
// runs it, with a counter on its server's `request` event). It answers a facility's GETs past
// 50 in the current second (150 per vendor key) with 429 and `Retry-After`, as Metrc does. In the
// bench process: the provider_a production port over fetch (`ProviderA.layer`, as the HTTP
// service builds it for production connections) with its default pacing (the descriptor's 50/s
// and 10 at once per facility, 150/s per vendor key), an in-process upstream governor
// (`UpstreamGovernor.makeMemory`) in context, and `Sync.backfillResource(…, "packages")` under
// `Sync.retryTransient`, as the backfill workflow runs it, storing into a `SyncStore` on a
// temporary libsql file (WAL, as the HTTP service's). Every request the emulator receives counts:
// the package list pages (20 packages each) and the per-package enrichment calls (lab results,
// source harvests) alike.
//
// The rate: Metrc's own 50/s. The emulator answers a list page of this facility in about a
// millisecond (it keeps each list's lastModified times and a package index per world revision:
// `providers/provider-a/lookup.ts`); before it did, a page cost it 35 ms, and its own busy event
// loop bunched the arrivals it counted into 429s the client had not earned.
//
// The whole backfill is about 105,000 requests (5,000 list pages, a source harvests call per
// package), 35 minutes at 50/s, so the row measures a fixed window from its start (60 s; --quick
// 15 s) and then interrupts it. Ceiling = 50/s × the window; ratio = requests received ÷ ceiling.
// Informative, in the same run: (1) the
// same requests (the URLs the sync sent, recorded, in order) replayed by a plain loop of as many
// workers as the port's per-facility concurrency, each taking the same governor's token before its
// fetch: what pacing alone reaches, without the sync; (2) the same backfill paced at the whole
// limit instead of the default 95%, to show what the margin buys.
import { FetchHttpClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { LibsqlClient } from "@effect/sql-libsql"
import { ProviderA, ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { ProviderPort, Session, UpstreamGovernor } from "@tracebridge/core"
import { SandboxServer } from "@tracebridge/sandbox"
import { Sync, SyncStore } from "@tracebridge/sync"
import { Effect, Fiber, Layer, ManagedRuntime, Option, Redacted } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { sleep, start, until } from "../lib/proc.mjs"
import { median, ms, now, round } from "../lib/stats.mjs"

/** The emulator's limit per facility and second: Metrc's, the descriptor's default pacing (GET/s). */
const RATE = ProviderA.descriptor.rateLimit.requestsPerSecond
/** The informative run's pace, as a share of the limit: all of it (the default pacing keeps 5% back). */
const MARGIN = 1
const PACKAGES = 100_000
const VENDOR_KEY = "tracebridge-bench-vendor-key"
const USER_KEY = "user_good"
const CONNECTION = "conn_bench_backfill"
/** The port's default pacing (the descriptor's): per facility, and per vendor key (3×, as Metrc). */
const { perFacility, perVendorKey } = ProviderAConfig.defaults

const emulatorScript = fileURLToPath(new URL("../lib/counting-sandbox.mjs", import.meta.url))

/** CPU seconds (user + system) a process has used so far (Linux /proc). */
const cpuOf = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const ownCpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1e6
}

const startEmulator = async () => {
  const proc = start(process.execPath, [emulatorScript, String(RATE), String(PACKAGES)])
  const line = await until("the emulator to listen", () => {
    if (!proc.alive()) throw new Error(`the emulator exited early:\n${proc.output().slice(-2000)}`)
    return /^ready (\S+) (\S+)$/m.exec(proc.output())
  }, 30_000)
  const [, origin, countsOrigin] = line
  /** The emulator's counts; `"reset"` zeroes them, `"times"` adds each request's arrival and status. */
  const counts = (what = "counts") =>
    fetch(`${countsOrigin}/${what}`, { method: what === "reset" ? "POST" : "GET" }).then((r) => r.json())
  return { proc, origin, counts }
}

/** The most of `times` (epoch ms) within any 1000 ms (half-open: [t, t + 1000)). */
const maxInSecond = (times) => {
  const s = [...times].sort((a, b) => a - b)
  let best = 0
  for (let i = 0, j = 0; i < s.length; i++) {
    while (s[i] - s[j] >= 1000) j++
    best = Math.max(best, i - j + 1)
  }
  return best
}

const sum = (o) => Object.values(o).reduce((a, b) => a + b, 0)
const fmtStatuses = (o) => Object.entries(o).map(([code, n]) => `${code} ×${n}`).join(", ") || "none"
const pct = (x) => `${Math.round(100 * x)}%`

/**
 * The packages backfill of the 100,000-package facility, paced at `pace` GET/s, for `seconds`
 * (then interrupted), on a fresh store and governor: what the emulator received, what the port
 * sent (URLs, headers and times, for the replay), what was stored, and where the time went.
 */
const backfill = async ({ dir, emulator, log, name, pace, seconds }) => {
  const governor = Effect.runSync(UpstreamGovernor.makeMemory)
  // Every request the port sends (URL, headers, when) and every status it receives.
  const sent = []
  const statuses = {}
  const recording = Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) =>
      client.pipe(
        HttpClient.tapRequest((request) =>
          Effect.sync(() => {
            const url = HttpClientRequest.toUrl(request)
            sent.push({
              url: Option.isSome(url) ? url.value.href : request.url,
              headers: { ...request.headers },
              at: Date.now()
            })
          })
        ),
        HttpClient.tap((response) =>
          Effect.sync(() => {
            statuses[response.status] = (statuses[response.status] ?? 0) + 1
          })
        )
      ))
  ).pipe(Layer.provide(FetchHttpClient.layer))
  const port = ProviderA.layer.pipe(
    Layer.provide(ProviderAConfig.layer({
      vendorKey: Redacted.make(VENDOR_KEY),
      perFacility: { ...perFacility, requestsPerSecond: pace },
      perVendorKey
    })),
    Layer.provide(recording),
    Layer.provide(Layer.succeed(UpstreamGovernor.UpstreamGovernor, governor))
  )
  // Where the backfill's time goes: its port reads (`changes`: a page of 500 packages with their
  // enrichment) and its stores (`apply`), timed around the real calls.
  const phases = { changes: [], apply: [] }
  const timed = (phase, effect) =>
    Effect.suspend(() => {
      const t = now()
      return Effect.ensuring(effect, Effect.sync(() => phases[phase].push(now() - t)))
    })
  const store = Layer.effect(
    SyncStore.SyncStore,
    Effect.map(SyncStore.make, (s) => ({ ...s, apply: (input) => timed("apply", s.apply(input)) }))
  )
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(port, store, Layer.succeed(Sync.SyncSettings, Sync.defaults)).pipe(
      Layer.provideMerge(LibsqlClient.layer({ url: `file:${join(dir, `${name}.db`)}` }))
    )
  )
  try {
    await runtime.runPromise(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe("PRAGMA journal_mode = WAL")
      yield* SyncStore.migration
    }))
    const session = Session.make({
      key: CONNECTION,
      provider: "provider_a",
      state: "CO",
      environment: "production",
      credentials: { user_key: USER_KEY },
      baseUrl: SandboxServer.baseUrl(emulator.origin, "provider_a", "CO")
    })
    // The cultivator (the facility of 100,000 packages; the world is generated on the first call).
    const { facility, opened } = await runtime.runPromise(Effect.gen(function*() {
      const port = yield* ProviderPort.ProviderPort
      const facilities = yield* port.listFacilities(session, { page: 1, per_page: 100 })
      const cultivator = facilities.items.find((f) => f.capabilities.includes("cultivation")) ?? facilities.items[0]
      const facility = yield* port.getFacility(session, cultivator.id)
      const timedPort = { ...port, changes: (...args) => timed("changes", port.changes(...args)) }
      return { facility, opened: { port: timedPort, session } }
    }))
    // Let the emulator's current second (and the governor's bucket) pass, then count from zero.
    await sleep(1_100)
    await emulator.counts("reset")
    sent.length = 0
    for (const k of Object.keys(statuses)) delete statuses[k]

    const cpu0 = { own: ownCpu(), emulator: cpuOf(emulator.proc.pid) }
    const t = now()
    const fiber = runtime.runFork(Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility(CONNECTION, facility.id, Date.now())
      return yield* Sync.retryTransient(Sync.backfillResource(opened, facility, CONNECTION, 0, "packages"))
    }))
    const finished = await Promise.race([
      runtime.runPromise(Fiber.await(fiber)).then(() => true),
      sleep(seconds * 1000).then(() => false)
    ])
    if (!finished) await runtime.runPromise(Fiber.interrupt(fiber))
    const elapsed = (now() - t) / 1000
    const cpu = {
      own: (ownCpu() - cpu0.own) / elapsed,
      emulator: (cpuOf(emulator.proc.pid) - cpu0.emulator) / elapsed
    }
    if (finished) {
      const exit = await runtime.runPromise(Fiber.await(fiber))
      if (exit._tag === "Failure") throw new Error(`the ${name} backfill failed: ${String(exit.cause)}`)
    }
    await sleep(200) // the last answers' `finish`
    const received = await emulator.counts("times")
    const stored = await runtime.runPromise(Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      const r = (yield* store.resources(CONNECTION, facility.id)).find((x) => x.resource === "packages")
      const state = yield* store.facility(CONNECTION, facility.id)
      return { count: r?.count ?? 0, status: r?.status ?? null, changes: Option.isSome(state) ? state.value.seq : 0 }
    }))
    if (finished && sent.length !== sum(statuses)) {
      throw new Error(`the port sent ${sent.length} requests but saw ${sum(statuses)} answers`)
    }
    const result = {
      pace,
      finished,
      elapsed,
      requests: received.requests,
      rate: received.requests / elapsed,
      statuses: received.statuses,
      limited: received.statuses["429"] ?? 0,
      kinds: received.kinds,
      sentByPort: sent.length,
      portStatuses: statuses,
      peaks: { sent: maxInSecond(sent.map((r) => r.at)), received: maxInSecond(received.arrivals.map(([at]) => at)) },
      stored,
      phases: {
        reads: phases.changes.length,
        readSeconds: round(phases.changes.reduce((a, b) => a + b, 0) / 1000, 2),
        stores: phases.apply.length,
        storeSeconds: round(phases.apply.reduce((a, b) => a + b, 0) / 1000, 2),
        storeMedianMs: round(median(phases.apply), 1)
      },
      cpu,
      facility: facility.id,
      licence: facility.license_number
    }
    log(
      `${name}: paced at ${pace}/s, ${result.requests} requests in ${round(elapsed, 1)} s (${
        round(result.rate, 1)
      }/s, ${
        pct(result.rate / RATE)
      } of ${RATE}/s), ${result.limited} × 429; most in any 1000 ms: ${result.peaks.sent} sent, ${result.peaks.received} ` +
        `received; ${stored.count} packages stored; stores ${result.phases.stores} (${result.phases.storeSeconds} s); CPU bench ${
          pct(cpu.own)
        }, emulator ${pct(cpu.emulator)}`
    )
    return { result, sent, governor }
  } finally {
    await runtime.dispose().catch(() => undefined)
  }
}

/** `requests` replayed in order by `workers` plain fetch loops, each taking `governor`'s token first. */
const replay = async ({ emulator, governor, licence, log, requests, workers }) => {
  await sleep(1_100)
  await emulator.counts("reset")
  const fingerprint = await Effect.runPromise(UpstreamGovernor.fingerprint(Redacted.make(VENDOR_KEY)))
  const bucket = UpstreamGovernor.key({ provider: "provider_a", vendorKeyFingerprint: fingerprint, licence })
  const policy = { requestsPerSecond: RATE }
  const sentAt = []
  let next = 0
  const cpu0 = { own: ownCpu(), emulator: cpuOf(emulator.proc.pid) }
  const t = now()
  const worker = async () => {
    while (next < requests.length) {
      const { headers, url } = requests[next++]
      await Effect.runPromise(governor.take(bucket, policy))
      sentAt.push(Date.now())
      const response = await fetch(url, { headers })
      await response.arrayBuffer()
    }
  }
  await Promise.all(Array.from({ length: workers }, worker))
  const elapsed = (now() - t) / 1000
  const cpu = { own: (ownCpu() - cpu0.own) / elapsed, emulator: (cpuOf(emulator.proc.pid) - cpu0.emulator) / elapsed }
  await sleep(200)
  const received = await emulator.counts("times")
  const result = {
    requests: received.requests,
    elapsed,
    rate: received.requests / elapsed,
    statuses: received.statuses,
    limited: received.statuses["429"] ?? 0,
    peaks: { sent: maxInSecond(sentAt), received: maxInSecond(received.arrivals.map(([at]) => at)) },
    cpu
  }
  log(
    `plain loop: ${result.requests} requests in ${round(elapsed, 1)} s (${round(result.rate, 1)}/s, ${
      pct(result.rate / RATE)
    }), ${result.limited} × 429; most in any 1000 ms: ${result.peaks.sent} sent, ${result.peaks.received} received; ` +
      `CPU bench ${pct(cpu.own)}, emulator ${pct(cpu.emulator)}`
  )
  return result
}

export default {
  id: 8,
  name: `backfill of a 100,000-package facility at a ${RATE} GET/s limit: share of the ceiling, 429s`,
  async run({ log, quick }) {
    const seconds = quick ? 15 : 60
    const dir = mkdtempSync(join(tmpdir(), "tb-bench-backfill-"))
    const emulator = await startEmulator()
    try {
      const t = now()
      await fetch(`${SandboxServer.baseUrl(emulator.origin, "provider_a", "CO")}/facilities/v2/`, {
        headers: { authorization: `Basic ${btoa(`${VENDOR_KEY}:${USER_KEY}`)}` }
      }).then((r) => r.arrayBuffer())
      log(`emulator up; the world of ${PACKAGES} packages generated in ${ms(now() - t)}`)

      const main = await backfill({ dir, emulator, log, name: "sync", pace: perFacility.requestsPerSecond, seconds })
      const ours = main.result
      const loop = await replay({
        emulator,
        governor: main.governor,
        licence: ours.licence,
        log,
        requests: main.sent,
        workers: perFacility.concurrency
      })
      const margin = (await backfill({ dir, emulator, log, name: "sync-full", pace: RATE * MARGIN, seconds })).result

      const ratio = ours.rate / RATE
      const kinds = Object.entries(ours.kinds).map(([k, n]) => `${n} ${k}`).join(", ")
      return {
        measured: `${round(ours.rate, 1)} req/s (${ours.requests} requests in ${
          round(ours.elapsed, 1)
        } s), ${ours.limited} × 429, ${ours.stored.count.toLocaleString("en-US")} packages stored`,
        baseline: `ceiling ${RATE} req/s; the same GETs in a plain governed loop ${round(loop.rate, 1)} req/s (${
          round(loop.rate / RATE, 3)
        }), ${loop.limited} × 429; the sync paced at ${Math.round(100 * MARGIN)}%: ${round(margin.rate, 1)} req/s (${
          round(margin.rate / RATE, 3)
        }), ${margin.limited} × 429`,
        ratio,
        checks: [
          { what: "share of the ceiling", value: round(ratio, 3), target: ">= 0.9", pass: ratio >= 0.9 },
          { what: "upstream 429s", value: ours.limited, target: "== 0", pass: ours.limited === 0 }
        ],
        note: `Emulator: the standalone sandbox (Standalone.start, seed 42, size {packages: ${PACKAGES}}) in a child ` +
          `process, limited to ${RATE} GET/s per facility and ${3 * RATE} per vendor key (Metrc's limits), ` +
          `counted on its server's request event. Ours: the provider_a production port over fetch with its ` +
          `default pacing (${perFacility.requestsPerSecond}/s, 95% of the limit; ${perFacility.concurrency} at once per facility) and an in-process ` +
          `UpstreamGovernor; Sync.backfillResource(…, "packages") under retryTransient with Sync.defaults ` +
          `(pages of 500, 365-day horizon, 24 h windows) into a SyncStore on a temporary libsql file (WAL). A ` +
          `whole backfill is about 105,000 requests (a list page per 20 packages, a source harvests call per ` +
          `package), so the row measures the first ${seconds} s and interrupts it: ${ours.requests} requests received (${kinds}; statuses ${
            fmtStatuses(ours.statuses)
          }), ` +
          `${ours.stored.count} packages stored; ${ours.phases.reads} port reads, ${ours.phases.stores} stores ` +
          `taking ${ours.phases.storeSeconds} s in all. Ratio = requests received ÷ (${RATE}/s × ${
            round(ours.elapsed, 1)
          } s). Most requests in any 1000 ms: ${ours.peaks.sent} sent by the port, ${ours.peaks.received} received. ` +
          `CPU: bench process ${pct(ours.cpu.own)}, emulator ${pct(ours.cpu.emulator)} of a core. Informative: ` +
          `(1) the ${loop.requests} URLs the sync sent, replayed in order by ${perFacility.concurrency} plain ` +
          `fetch workers, each taking the same governor's token first: ${round(loop.rate, 1)} req/s, statuses ` +
          `${fmtStatuses(loop.statuses)} (most in any 1000 ms: ${loop.peaks.sent} sent, ${loop.peaks.received} ` +
          `received); (2) the same backfill, fresh store and governor, paced at ${RATE * MARGIN}/s (${
            Math.round(100 * MARGIN)
          }% of the limit): ${margin.requests} requests in ${round(margin.elapsed, 1)} s, ${
            round(margin.rate, 1)
          } req/s (${round(margin.rate / RATE, 3)} of the limit, ${
            round(margin.rate / margin.pace, 3)
          } of its pace), statuses ${fmtStatuses(margin.statuses)}, most in any 1000 ms ${margin.peaks.sent} sent, ` +
          `${margin.stored.count} packages stored.`,
        data: { rate: RATE, seconds, packages: PACKAGES, ours, plainLoop: loop, margin }
      }
    } finally {
      await emulator.proc.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}
