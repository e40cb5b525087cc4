import type { ProviderPort, Session } from "@tracebridge/core"
import { Ids, ProviderError } from "@tracebridge/core"
import type { Schema } from "effect"
import { Clock, Effect } from "effect"
import type { Client } from "../ProviderAClient.js"
import type { Settings } from "../ProviderAConfig.js"
import { mapWire } from "./decode.js"
import { descriptor } from "./descriptor.js"
import type { MapContext } from "./mappers/context.js"
import { PROVIDER } from "./mappers/context.js"
import type { Source } from "./paging.js"
import { windows } from "./paging.js"
import { Paged } from "./wire/common.js"

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

  const paged = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    path: string,
    schema: Schema.Schema<A, I>,
    operation: string,
    query: Readonly<Record<string, string | undefined>> = {}
  ): Source<A> =>
  (pageNumber, pageSize) =>
    Effect.map(
      client.get(session, path, pagedOf(schema), {
        operation,
        license: license(facility),
        query: { ...query, pageNumber, pageSize }
      }),
      (p) => ({ items: p.Data, total: p.Total })
    )

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

  /** One source per endpoint, or per endpoint × lastModified window when `updated_since` is set. */
  const windowed = <A, I>(
    session: Session.Session,
    facility: FacilityRef,
    paths: ReadonlyArray<string>,
    schema: Schema.Schema<A, I>,
    operation: string,
    since: string | undefined
  ): Effect.Effect<ReadonlyArray<Source<A>>, ProviderError.InvalidInput> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (since === undefined) {
        return Effect.succeed(paths.map((path) => paged(session, facility, path, schema, operation)))
      }
      return Effect.as(
        withinLookback(operation, "updated_since", Date.parse(since), now),
        paths.flatMap((path) =>
          windows(Date.parse(since), now, settings.windowHours).map((span) =>
            paged(session, facility, path, schema, operation, span)
          )
        )
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

  return { client, settings, ctxOf, license, paged, withinLookback, windowed, getOne, byId }
}

/** The reading tools of one driver. */
export type Reader = ReturnType<typeof makeReader>
