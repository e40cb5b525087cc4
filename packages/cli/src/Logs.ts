/**
 * `tracebridge logs tail`: follows the organisation's request log (the dashboard's, issue #33),
 * printing each new `/v1` request once, oldest first, with the upstream calls it made (Metrc's
 * 401, BioTrack's errorcode, a 429).
 *
 * It polls the dashboard's `GET /dashboard/api/logs` as the signed-in member
 * (`DashboardSession.ts`) every `interval`: the newest pages down to what it has printed, within a
 * 60-second overlap, because the log is written in batches (up to a second late) and a request is
 * stored when it ends, not when it began. A request is printed once (remembered by id for the
 * overlap). Starting, it prints nothing of the past: only what arrives from then on.
 *
 * @since 0.1.0
 */
import { DashboardApi } from "@tracebridge/api"
import type { Duration } from "effect"
import { Effect, Schema } from "effect"
import { CliError } from "./Credentials.js"
import * as DashboardSession from "./DashboardSession.js"

/**
 * What to follow.
 *
 * @since 0.1.0
 * @category models
 */
export interface Filters {
  readonly status?: "2xx" | "4xx" | "5xx" | undefined
  readonly route?: string | undefined
  readonly connection?: string | undefined
}

/**
 * One request as printed (`--json`: one such object per line).
 *
 * @since 0.1.0
 * @category models
 */
export type Printed = typeof DashboardApi.LogEntry.Type & {
  readonly upstream: ReadonlyArray<typeof DashboardApi.UpstreamCall.Type>
}

/** How far back a poll reads for requests stored late. */
const OVERLAP_MS = 60_000
/** The most pages one poll reads (100 each): past them, the gap is said, not hidden. */
const MAX_PAGES = 5

const decodePage = Schema.decodeUnknown(DashboardApi.LogPage)
const decodeDetail = Schema.decodeUnknown(DashboardApi.LogDetail)
const unreadable = () => new CliError("reading the request log: the dashboard answered something unexpected")

const listPath = (filters: Filters, cursor: string | undefined) => {
  const query = new URLSearchParams({ limit: "100" })
  if (filters.status !== undefined) query.set("status_class", filters.status)
  if (filters.route !== undefined) query.set("route", filters.route)
  if (filters.connection !== undefined) query.set("connection_id", filters.connection)
  if (cursor !== undefined) query.set("cursor", cursor)
  return `/logs?${query}`
}

/**
 * The requests of the log not yet seen, oldest first, from the newest back to `since` (epoch ms),
 * at most {@link MAX_PAGES} pages; and whether it stopped before reaching `since`.
 */
const newSince = (
  session: DashboardSession.Session,
  filters: Filters,
  since: number,
  seen: ReadonlyMap<string, number>
) =>
  Effect.gen(function*() {
    const found: Array<typeof DashboardApi.LogEntry.Type> = []
    let cursor: string | undefined
    for (let page = 0; page < MAX_PAGES; page++) {
      const raw = yield* DashboardSession.get<unknown>(session, listPath(filters, cursor))
      const { data, next_cursor } = yield* Effect.mapError(decodePage(raw), unreadable)
      let reached = false
      for (const entry of data) {
        if (entry.at < since) {
          reached = true
          break
        }
        if (!seen.has(entry.request_id)) found.push(entry)
      }
      if (reached || next_cursor === null) return { entries: found.reverse(), cut: false }
      cursor = next_cursor
    }
    return { entries: found.reverse(), cut: true }
  })

const pad = (text: string, width: number) => text.length >= width ? text : text + " ".repeat(width - text.length)

/**
 * A request as text: its line, then one indented line per upstream call.
 *
 * @since 0.1.0
 * @category printing
 */
export const format = (request: Printed): string =>
  [
    `${new Date(request.at).toISOString()}  ${pad(request.method, 6)} ${request.status}  ${
      pad(`${Math.round(request.duration_ms)} ms`, 8)
    } ${request.path}  ${request.request_id}${request.error_code === null ? "" : `  ${request.error_code}`}`,
    ...request.upstream.map((call) =>
      `    ↳ ${call.provider} ${call.state} ${pad(call.method, 6)} ${
        call.status === null ? (call.failure ?? "no answer") : String(call.status)
      }  ${pad(`${Math.round(call.duration_ms)} ms`, 8)} ${call.path}${
        call.attempt > 1 ? `  (attempt ${call.attempt})` : ""
      }${call.rate_limited ? "  rate limited" : ""}${call.error_code === null ? "" : `  errorcode ${call.error_code}`}`
    )
  ].join("\n")

/**
 * Follows the log until interrupted, printing each new request (`json`: one object per line).
 *
 * @since 0.1.0
 * @category tail
 */
export const tail = (
  session: DashboardSession.Session,
  filters: Filters,
  options: { readonly json: boolean; readonly interval: Duration.DurationInput },
  print: (line: string) => Effect.Effect<void>
): Effect.Effect<never, CliError> =>
  Effect.gen(function*() {
    // the past is not printed: what is in the log now is only marked as seen
    const seen = new Map<string, number>()
    const first = yield* DashboardSession.get<unknown>(session, listPath(filters, undefined))
    const { data } = yield* Effect.mapError(decodePage(first), unreadable)
    let newest = data.length > 0 ? data[0]!.at : Date.now()
    for (const entry of data) seen.set(entry.request_id, entry.at)
    if (!options.json) {
      yield* print(`Following the request log of ${session.organisationId} as ${session.email} (Ctrl-C to stop)`)
    }
    return yield* Effect.forever(
      Effect.gen(function*() {
        yield* Effect.sleep(options.interval)
        const { cut, entries } = yield* newSince(session, filters, newest - OVERLAP_MS, seen)
        if (cut && !options.json) {
          yield* print(`… more than ${MAX_PAGES * 100} requests since the last look: the oldest are not shown`)
        }
        for (const entry of entries) {
          seen.set(entry.request_id, entry.at)
          newest = Math.max(newest, entry.at)
          const upstream = entry.upstream_calls === 0 ? [] : yield* Effect.flatMap(
            DashboardSession.get<unknown>(session, `/logs/${encodeURIComponent(entry.request_id)}`),
            (raw) => Effect.mapError(decodeDetail(raw), unreadable)
          ).pipe(Effect.map((detail) => detail.upstream))
          const printed: Printed = { ...entry, upstream }
          yield* print(options.json ? JSON.stringify(printed) : format(printed))
        }
        for (const [id, at] of seen) if (at < newest - 2 * OVERLAP_MS) seen.delete(id)
      })
    )
  })
