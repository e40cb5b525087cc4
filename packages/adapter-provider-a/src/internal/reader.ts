import type { ProviderPort, Session } from "@tracebridge/core"
import { Ids, Page, ProviderError, ReadWindow, Skipped } from "@tracebridge/core"
import { Clock, Effect, Either, Option, Schema } from "effect"
import type { Client } from "../ProviderAClient.js"
import type { Settings } from "../ProviderAConfig.js"
import { TtlCache } from "./cache.js"
import { decodeWire, mapWire } from "./decode.js"
import { descriptor } from "./descriptor.js"
import { canonicalize } from "./keys.js"
import type { MapContext } from "./mappers/context.js"
import { PROVIDER } from "./mappers/context.js"
import { sameLicense } from "./mappers/toTransfer.js"
import type { Source } from "./paging.js"
import { readAll, windows } from "./paging.js"
import { Paged } from "./wire/common.js"
import { FacilityV2 } from "./wire/Facility.js"

const DAY = 86_400_000

/** How long a facility's licence start date is reused. */
const HISTORY_TTL_MS = 10 * 60_000

/**
 * The lists Metrc documents no lastModified window for (research: the windowed lists are the
 * packages, plants, harvests, active items, locations and strains, incoming and outgoing
 * transfers, sales receipts and deliveries): read whole, once, however far back a read goes.
 */
export const unwindowed: ReadonlySet<string> = new Set([
  "/patients/v2/active",
  "/items/v2/inactive",
  "/strains/v2/inactive",
  "/locations/v2/inactive",
  "/transfers/v2/rejected",
  "/transfers/v2/templates/outgoing"
])

/**
 * A row's Metrc id, as Tracebridge's provider ids use it (the `Label` of a package or plant, else
 * `Id` or `PatientId`, in any key casing), or its position in the list.
 */
export const upstreamIdOf = (row: unknown, position: number): string => {
  const canonical = canonicalize(row) as Record<string, unknown> | null
  const id = typeof canonical === "object" && canonical !== null
    ? canonical["Label"] ?? canonical["Id"] ?? canonical["PatientId"]
    : undefined
  return typeof id === "string" || typeof id === "number" ? String(id) : `row ${position}`
}

/** Leaves a row out of a list: reported in the list's `meta.skipped`, and logged with where it failed. */
export const skip = (session: Session.Session, operation: string, upstreamId: string, error: Err) => {
  const field = "path" in error && typeof error.path === "string" ? error.path : "(row)"
  const reason = error.message
  return Effect.zipRight(
    Effect.logWarning("provider_a: skipped an upstream row that cannot be read").pipe(
      Effect.annotateLogs({ provider: PROVIDER, state: session.state, operation, field, upstream_id: upstreamId })
    ),
    Skipped.report({ upstream_id: upstreamId, reason })
  )
}

/** Where a read by modification time ends: `ReadWindow.Until` when the caller bounds it, else now. */
export const readEnd = (now: number): Effect.Effect<number> =>
  Effect.map(ReadWindow.Until, (until) => Math.min(Option.getOrElse(until, () => now), now))

/** Metrc's largest page (`pageSize` may not exceed it). */
export const PAGE = descriptor.providerPageSize ?? 20

/** The failures of every driver call. */
export type Err = ProviderError.ProviderError

/** The facility a call is about. */
export type FacilityRef = ProviderPort.FacilityRef

const pagedSchemas = new Map<unknown, Schema.Schema<any, any>>()
const pagedOf = <A, I>(
  schema: Schema.Schema<A, I>
): Schema.Schema<{ readonly Data: ReadonlyArray<A>; readonly Total: number }, any> => {
  let paged = pagedSchemas.get(schema)
  if (paged === undefined) {
    paged = Paged(schema)
    pagedSchemas.set(schema, paged)
  }
  return paged
}

/**
 * The rows of a list mapped to core, tolerantly: a row the mapper refuses (a missing required
 * field) is left out, reported as skipped and logged, and the others are kept in order.
 */
export const mapRows = <A, B>(
  session: Session.Session,
  operation: string,
  rows: ReadonlyArray<A>,
  f: (a: A) => B
): Effect.Effect<Array<B>> =>
  Effect.map(
    Effect.forEach(rows, (row, i) => {
      const mapped = mapWire(operation, f)(row)
      return Either.isRight(mapped)
        ? Effect.succeed([mapped.right])
        : Effect.as(skip(session, operation, upstreamIdOf(row, i), mapped.left), [])
    }),
    (out) => out.flat()
  )

/**
 * A window of a list whose every row is read and mapped first (tolerantly, as {@link mapRows}),
 * so that the total counts only the rows a page can deliver: a skipped row has no place in any
 * page, and a client that pages by `total` must not wait for it (DECISIONS "Tolerant reads").
 */
export const mappedWindow = <W, B>(
  session: Session.Session,
  operation: string,
  sources: ReadonlyArray<Source<W>>,
  window: Page.Window,
  f: (w: W) => B
): Effect.Effect<Page.Slice<B>, Err> =>
  Effect.flatMap(
    readAll(sources, PAGE),
    (rows) => Effect.map(mapRows(session, operation, rows, f), (mapped) => Page.sliceOf(mapped, window))
  )

/** A mapper from the wire to core, its failures as `ProviderError`s of `operation`. */
export const map = <A, B>(operation: string, f: (a: A) => B) => (a: A): Effect.Effect<B, Err> =>
  mapWire(operation, f)(a)

/**
 * How the driver reads Metrc over the client: a facility's licence and mapping context, paged
 * lists (one source per endpoint, or per endpoint × lastModified window), single objects.
 */
export const makeReader = (client: Client, settings: Settings) => {
  const ctxOf = (session: Session.Session, facility: FacilityRef): MapContext => ({
    facility_id: facility.id,
    state: session.state
  })
  const license = (facility: FacilityRef) => facility.provider_facility_id

  /**
   * A page of a list, read tolerantly (DECISIONS "Tolerant reads"): the wrapper must decode, but a
   * row that does not fit the wire schema is left out, reported as skipped and logged.
   */
  const paged = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    path: string,
    schema: Schema.Schema<A, I>,
    operation: string,
    query: Readonly<Record<string, string | undefined>> = {}
  ): Source<A> =>
  (pageNumber, pageSize) => {
    const decode = decodeWire(schema, operation)
    return Effect.flatMap(
      client.get(session, path, pagedOf(Schema.Unknown), {
        operation,
        license: license(facility),
        query: { ...query, pageNumber, pageSize }
      }),
      (p) =>
        Effect.map(
          Effect.forEach(p.Data, (row, i) => {
            const decoded = decode(row)
            return Either.isRight(decoded)
              ? Effect.succeed([decoded.right])
              : Effect.as(
                skip(session, operation, upstreamIdOf(row, (pageNumber - 1) * pageSize + i), decoded.left),
                []
              )
          }),
          (rows) => ({ items: rows.flat(), total: p.Total })
        )
    )
  }

  /** Refuses a start further back than `maxLookbackDays` (one request per window: it would never end). */
  const withinLookback = (operation: string, path: string, startMs: number, now: number) =>
    startMs >= now - settings.maxLookbackDays * 86_400_000
      ? Effect.void
      : Effect.fail(
        new ProviderError.InvalidInput({
          operation,
          path,
          message: `${path} may reach at most ${settings.maxLookbackDays} days back on ${PROVIDER} ` +
            "(it is read in 24 h windows, one request each)"
        })
      )

  /** Each facility's licence start (epoch ms, or null when Metrc gives none), per login. */
  const licenceStarts = new TtlCache<number | null>(HISTORY_TTL_MS)

  /** When the facility's licence started, from `/facilities/v2/` (read once per login and licence). */
  const licenceStart = (session: Session.Session, facility: FacilityRef, now: number) => {
    const key = `${session.key}|${license(facility)}`
    const cached = licenceStarts.get(key, now)
    if (cached !== undefined) return Effect.succeed(cached)
    return Effect.map(
      client.get(session, "/facilities/v2/", Schema.Array(FacilityV2), { operation: "facilities.list" }),
      (rows) => {
        const row = rows.find((r) => sameLicense(r.License.Number, license(facility)))
        const start = row?.License.StartDate == null ? Number.NaN : Date.parse(row.License.StartDate.slice(0, 10))
        // A licence date is a local day: a day earlier in UTC covers every US time zone (and Guam's).
        const at = Number.isNaN(start) ? null : start - DAY
        licenceStarts.set(key, at, now)
        return at
      }
    )
  }

  /**
   * Where a complete read starts: the facility's licence start, or the history horizon
   * (`maxLookbackDays` ago) when that is later.
   */
  const historyStart = (session: Session.Session, facility: FacilityRef) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.map(licenceStart(session, facility, now), (start) => {
        const horizon = now - settings.maxLookbackDays * DAY
        return { from: start === null ? horizon : Math.max(start, horizon), now }
      }))

  /**
   * The sources of a complete read of one or more lists: for a list Metrc windows, one source per
   * lastModified window from `since` (or the facility's history start) to now, oldest first; for a
   * list Metrc documents without windows (`unwindowed`), the whole list once.
   */
  const windowed = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    paths: ReadonlyArray<string>,
    schema: Schema.Schema<A, I>,
    operation: string,
    since: string | undefined
  ): Effect.Effect<ReadonlyArray<Source<A>>, Err> =>
    Effect.gen(function*() {
      if (paths.every((path) => unwindowed.has(path))) {
        return paths.map((path) => paged(session, facility, path, schema, operation))
      }
      let from: number
      const now = yield* Clock.currentTimeMillis
      if (since === undefined) {
        from = (yield* historyStart(session, facility)).from
      } else {
        yield* withinLookback(operation, "updated_since", Date.parse(since), now)
        from = Date.parse(since)
      }
      // A bounded read (the managed sync's window) stops at its end; the lists Metrc cannot
      // window are read only by the window that reaches now, not once per window of history.
      const end = yield* readEnd(now)
      const reachesNow = end >= now - settings.windowHours * 3_600_000
      const spans = windows(from, end, settings.windowHours)
      return paths.flatMap((path) =>
        unwindowed.has(path)
          ? (reachesNow ? [paged(session, facility, path, schema, operation)] : [])
          : spans.map((span) => paged(session, facility, path, schema, operation, span))
      )
    })

  const getOne = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    path: string,
    schema: Schema.Schema<A, I>,
    operation: string,
    notFound: { readonly resource: string; readonly id: string }
  ) => client.get(session, path, schema, { operation, license: license(facility), notFound })

  /** A record by numeric id (`{path}/{id}`), mapped to core; any other id is not found. */
  const byId = <W, I, A>(
    path: string,
    wire: Schema.Schema<W, I>,
    kind: Ids.Kind,
    operation: string,
    toCore: (w: W, ctx: MapContext) => A
  ) =>
  (session: Session.Session, facility: FacilityRef, id: string): Effect.Effect<A, Err> => {
    const notFound = ProviderError.ResourceNotFound.of(kind, Ids.make(kind, PROVIDER, id))
    if (!/^\d+$/.test(id)) return Effect.fail(notFound)
    return Effect.flatMap(
      getOne(session, facility, `${path}/${id}`, wire, operation, { resource: kind, id: notFound.id }),
      map(operation, (w: W) => toCore(w, ctxOf(session, facility)))
    )
  }

  return { client, settings, ctxOf, license, paged, withinLookback, historyStart, windowed, getOne, byId }
}

/** The reading tools of one driver. */
export type Reader = ReturnType<typeof makeReader>
