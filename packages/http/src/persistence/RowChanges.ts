/**
 * What tells a Postgres node that a row `RowCache` may keep has changed, on any node (issue #35):
 * Postgres `LISTEN`/`NOTIFY` on one connection of its own.
 *
 * - **Every change notifies.** Migration `0020_row_change_notices` puts a statement trigger on
 *   `tokens`, `organisations`, `api_clients` and `connections` (after `UPDATE`, `DELETE`,
 *   `TRUNCATE`) that sends `NOTIFY tracebridge_rows, '<schema>.<table>'`. Postgres sends it at
 *   commit, to every listening session, whichever process or tool made the change (another API
 *   node, `npm run admin`, hand-written SQL). Inserts do not notify: a miss is never kept, so a new
 *   row cannot make a kept one stale.
 * - **Any notice of this schema empties the cache** (`version` moves on). So does the listener
 *   (re)connecting: notices sent while it was away are lost.
 * - **No listener, no cache.** While the connection is not listening (starting, lost, being
 *   re-made, a heartbeat unanswered), `version` is `NaN`: `RowCache` then keeps nothing and reads
 *   every row, as it did before this cache existed.
 * - **This node's own writes** move `version` at once (`bump`, called by the stores' writes), and
 *   the write's answer then waits for a fence (`fence`): a notice this node sends after its commit,
 *   which every listening node answers with an acknowledgement once it has handled it. A listener
 *   reads notices in commit order, so a node that acknowledged the fence has already dropped what
 *   the write changed. The fence waits for as many acknowledgements as there are listening
 *   sessions of this schema (`pg_stat_activity`, by the listener's `application_name`), at most
 *   `timeoutMs`: a node that is up answers in about a round trip; one that does not answer in time
 *   is a node whose own heartbeat is about to fail (then it keeps nothing).
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import * as Pg from "pg"

/**
 * The channel of the row-change notices (the trigger's, and the fences').
 *
 * @since 0.1.0
 * @category constants
 */
export const CHANNEL = "tracebridge_rows"

/**
 * @since 0.1.0
 * @category models
 */
export interface RowChanges {
  /** The cache's version: moves on with every change; `NaN` while nothing is listening. */
  readonly version: () => number
  /** This node changed a row: move the version now. */
  readonly bump: () => void
  /**
   * Waits (at most `timeoutMs`) until every listening node has acknowledged a notice sent now; a
   * fence that does not come back to this node's own listener drops it (no cache until it is back).
   */
  readonly fence: Effect.Effect<void>
  /** Whether the listener listens now (for tests and the health of the cache). */
  readonly listening: () => boolean
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Between heartbeats (`SELECT 1` on the listening connection). Default 5000. */
  readonly heartbeatMs?: number | undefined
  /** A heartbeat or fence unanswered this long drops the connection. Default 2000. */
  readonly timeoutMs?: number | undefined
}

/** The listening session's `application_name`, by which a fence counts the listeners of a schema. */
const applicationName = (schema: string) => `tb-rows:${schema}`.slice(0, 63)

const RETRY_MIN_MS = 100
const RETRY_MAX_MS = 5_000

/**
 * Listens on a connection of its own to `url` (the same URL as the pool, so the same schema) until
 * the scope closes, re-connecting with backoff when the connection is lost.
 *
 * @since 0.1.0
 * @category constructors
 */
export const listen = (url: string, options: Options = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => start(url, options)),
    (running) => Effect.promise(() => running.close())
  ).pipe(Effect.map((running) => running.changes))

const start = (url: string, options: Options) => {
  const heartbeatMs = options.heartbeatMs ?? 5_000
  const timeoutMs = options.timeoutMs ?? 2_000
  let generation = 0
  let client: Pg.Client | undefined
  let listening = false
  let schema = ""
  let closed = false
  let retryMs = RETRY_MIN_MS
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  let fenceCount = 0
  const node = Math.random().toString(36).slice(2, 10)
  /** Fences under way: acknowledgements still awaited (this node's own echo counts as one). */
  const fences = new Map<string, { awaited: number; echoed: boolean; readonly finish: () => void }>()
  const acknowledged = (id: string) => {
    const fence = fences.get(id)
    if (fence === undefined) return
    if (id.startsWith(`${node}.`) && !fence.echoed) fence.echoed = true
    fence.awaited--
    if (fence.awaited <= 0) fence.finish()
  }

  const withTimeout = <A>(promise: Promise<A>): Promise<A> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer on the row-change listener")), timeoutMs)
      promise.then(
        (a) => {
          clearTimeout(timer)
          resolve(a)
        },
        (e) => {
          clearTimeout(timer)
          reject(e)
        }
      )
    })

  const drop = (which: Pg.Client) => {
    if (which !== client) return
    client = undefined
    listening = false
    generation++
    for (const fence of [...fences.values()]) fence.finish()
    which.removeAllListeners("notification")
    which.end().catch(() => undefined)
    if (!closed) {
      retryTimer = setTimeout(connect, retryMs)
      retryMs = Math.min(RETRY_MAX_MS, retryMs * 2)
    }
  }

  const connect = () => {
    retryTimer = undefined
    if (closed) return
    const next = new Pg.Client({ connectionString: url, keepAlive: true })
    client = next
    next.on("error", () => drop(next))
    next.on("end", () => drop(next))
    next.on("notification", (message) => {
      const payload = message.payload ?? ""
      if (message.channel !== CHANNEL || !payload.startsWith(`${schema}.`)) return
      generation++
      const rest = payload.slice(schema.length + 1)
      if (rest.startsWith("fence.")) {
        const id = rest.slice("fence.".length)
        // handled in order: everything committed before the fence has been dropped here
        if (id.startsWith(`${node}.`)) acknowledged(id)
        else next.query("SELECT pg_notify($1, $2)", [CHANNEL, `${schema}.ack.${id}`]).catch(() => drop(next))
      } else if (rest.startsWith(`ack.${node}.`)) {
        acknowledged(rest.slice("ack.".length))
      }
    })
    withTimeout(
      next.connect()
        .then(() => next.query("SELECT current_schema() AS s"))
        .then((result) => {
          schema = String(result.rows[0]?.s ?? "")
          return next.query("SELECT set_config('application_name', $1, false)", [applicationName(schema)])
        })
        .then(() => next.query(`LISTEN ${CHANNEL}`))
    ).then(
      () => {
        if (client !== next) return
        generation++
        listening = true
        retryMs = RETRY_MIN_MS
      },
      () => drop(next)
    )
  }

  const heartbeat = setInterval(() => {
    const current = client
    if (current === undefined || !listening) return
    withTimeout(current.query("SELECT 1")).catch(() => drop(current))
  }, heartbeatMs)
  heartbeat.unref()
  connect()

  const changes: RowChanges = {
    version: () => (listening ? generation : Number.NaN),
    bump: () => {
      generation++
    },
    fence: Effect.async<void>((resume) => {
      const current = client
      if (current === undefined || !listening) return resume(Effect.void)
      const id = `${node}.${++fenceCount}`
      let done = false
      const finish = () => {
        if (done) return
        done = true
        clearTimeout(timer)
        fences.delete(id)
        resume(Effect.void)
      }
      const timer = setTimeout(() => {
        if (done) return
        // not even this node's own echo came back: its listener is gone
        if (fences.get(id)?.echoed !== true) drop(current)
        finish()
      }, timeoutMs)
      const fence = { awaited: Number.POSITIVE_INFINITY, echoed: false, finish }
      fences.set(id, fence)
      current.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
        [applicationName(schema)]
      ).then((result) => {
        fence.awaited = Math.max(1, Number(result.rows[0]?.n ?? 1))
        return current.query("SELECT pg_notify($1, $2)", [CHANNEL, `${schema}.fence.${id}`])
      }).catch(() => {
        drop(current)
        finish()
      })
    }),
    listening: () => listening
  }

  return {
    changes,
    close: async () => {
      closed = true
      clearInterval(heartbeat)
      if (retryTimer !== undefined) clearTimeout(retryTimer)
      const current = client
      client = undefined
      listening = false
      for (const fence of [...fences.values()]) fence.finish()
      if (current !== undefined) {
        current.removeAllListeners()
        current.on("error", () => undefined)
        await current.end().catch(() => undefined)
      }
    }
  }
}
