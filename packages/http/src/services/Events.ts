/**
 * The events API (DECISIONS "Events", issue #34): every event the organisation's webhooks were
 * sent, newest first, each with its delivery summary, and their retention. An access token reads
 * the organisation's events; a connection token its own connection's only (another connection's
 * filter is 403, another connection's event 404).
 *
 * @since 0.1.0
 */
import type { Principal } from "@tracebridge/api/Security"
import { Page, WebhookEvent } from "@tracebridge/core"
import { Clock, Config, Context, Duration, Effect, Either, Layer, Option, Stream } from "effect"
import * as Errors from "../Errors.js"
import { EventStore } from "../persistence/EventStore.js"
import type { EventDelivery } from "../persistence/EventStore.js"
import type { WebhookEventRow } from "../persistence/WebhookStore.js"
import { Readiness } from "../Readiness.js"
import * as Auth from "./Auth.js"

/**
 * Where an event's deliveries stand.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeliverySummary {
  readonly status: "delivered" | "pending" | "failed"
  readonly endpoints: ReadonlyArray<{
    readonly webhook_id: string
    readonly delivery_id: string
    readonly status: "pending" | "succeeded" | "failed"
    readonly attempts: number
  }>
}

type Body = WebhookEvent.WebhookEvent

/**
 * An event as `GET /v1/events` answers it: per type, the delivered body's `data` of that type.
 *
 * @since 0.1.0
 * @category models
 */
export type EventView = {
  readonly [T in Body["type"]]: {
    readonly id: string
    readonly type: T
    readonly created_at: string
    readonly connection_id: string
    readonly data: Extract<Body, { readonly type: T }>["data"]
    readonly delivery: DeliverySummary
  }
}[Body["type"]]

/**
 * `GET /v1/events`'s query, decoded.
 *
 * @since 0.1.0
 * @category models
 */
export interface EventsQuery extends Page.PageRequest {
  readonly type?: WebhookEvent.EventType | undefined
  readonly connection_id?: string | undefined
  readonly "created[gte]"?: string | undefined
  readonly "created[lte]"?: string | undefined
  readonly delivery_success?: "true" | "false" | undefined
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly list: (principal: Principal, query: EventsQuery) => Effect.Effect<Page.Page<EventView>, Errors.HttpError>
  readonly get: (principal: Principal, id: string) => Effect.Effect<EventView, Errors.HttpError>
  /**
   * The server-sent event stream of `GET /v1/events/stream`: each new event as it is stored (its
   * delivery body as `data`, its id as `id`, its type as `event`), a heartbeat comment every
   * {@link heartbeat}, from after `lastEventId` when given (with an overlap, so repeats are possible
   * and nothing is missed), else from now. It ends when the node drains or the bearer token stops
   * being valid; the client reconnects with `Last-Event-ID`.
   */
  readonly stream: (
    principal: Principal,
    bearer: string,
    options: StreamOptions
  ) => Effect.Effect<Stream.Stream<string>, Errors.HttpError>
}

/**
 * What the event stream sends: some types only, one connection only, and where to resume.
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions {
  readonly types?: ReadonlyArray<WebhookEvent.EventType> | undefined
  readonly connectionId?: string | undefined
  readonly lastEventId?: string | undefined
}

/**
 * How often the stream looks for new events.
 *
 * @since 0.1.0
 * @category constants
 */
export const STREAM_POLL = Duration.millis(500)

/**
 * How often the stream sends a heartbeat comment when nothing else moves
 * (`TRACEBRIDGE_EVENT_STREAM_HEARTBEAT_SECONDS`, default 15, 1 to 60): below the idle timeouts of
 * the proxies in between (and the server's own socket idle timeout).
 *
 * @since 0.1.0
 * @category config
 */
export const heartbeat: Config.Config<Duration.Duration> = Config.integer(
  "TRACEBRIDGE_EVENT_STREAM_HEARTBEAT_SECONDS"
).pipe(
  Config.validate({ message: "must be a whole number of seconds from 1 to 60", validation: (n) => n >= 1 && n <= 60 }),
  Config.withDefault(15),
  Config.map(Duration.seconds)
)

/**
 * How far back each read of the stream reaches behind the newest event it sent: an event stored
 * late (another node's transaction committing after a newer one, a clock a little behind) is still
 * sent. Ids already sent are not sent again within a connection; a reconnect may repeat some.
 *
 * @since 0.1.0
 * @category constants
 */
export const STREAM_OVERLAP = Duration.seconds(10)

/** One server-sent event frame: the id, the type, and the body on one `data` line (it is JSON). */
const frame = (row: WebhookEventRow): string => `id: ${row.id}\nevent: ${row.type}\ndata: ${row.body}\n\n`

/**
 * @since 0.1.0
 * @category tags
 */
export class Events extends Context.Tag("Http/Events")<Events, Service>() {}

/**
 * Where an event's deliveries stand: `failed` when one failed for good, else `pending` while one
 * is being tried, else `delivered` (also when no endpoint was subscribed).
 *
 * @since 0.1.0
 * @category conversions
 */
export const summaryOf = (deliveries: ReadonlyArray<EventDelivery>): DeliverySummary => ({
  status: deliveries.some((d) => d.status === "failed")
    ? "failed"
    : deliveries.some((d) => d.status === "pending")
    ? "pending"
    : "delivered",
  endpoints: deliveries.map((d) => ({
    webhook_id: d.endpoint_id,
    delivery_id: d.id,
    status: d.status,
    attempts: d.attempts
  }))
})

/**
 * An event row as the API shows it: the delivered body's `data`, as it was sent.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toEventView = (row: WebhookEventRow, deliveries: ReadonlyArray<EventDelivery>): EventView => {
  const body = WebhookEvent.decode(JSON.parse(row.body))
  // the body's type and data go together, as the view's do
  return {
    id: row.id,
    type: body.type,
    created_at: new Date(row.created_at).toISOString(),
    connection_id: row.connection_id,
    data: body.data,
    delivery: summaryOf(deliveries)
  } as EventView
}

const instant = (iso: string | undefined) => iso === undefined ? undefined : Date.parse(iso)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.effect(
  Events,
  Effect.gen(function*() {
    const store = yield* EventStore
    const readiness = yield* Readiness
    const auth = yield* Auth.Auth
    const beat = Duration.toMillis(yield* heartbeat.pipe(Effect.orDie))
    const views = (rows: ReadonlyArray<WebhookEventRow>) =>
      Effect.map(store.deliveries(rows.map((r) => r.id)), (deliveries) => {
        const byEvent = new Map<string, Array<EventDelivery>>()
        for (const d of deliveries) {
          const list = byEvent.get(d.event_id) ?? []
          list.push(d)
          byEvent.set(d.event_id, list)
        }
        return rows.map((row) => toEventView(row, byEvent.get(row.id) ?? []))
      })
    return {
      list: (principal, query) =>
        Effect.gen(function*() {
          const own = principal.connection_id
          if (own !== null && query.connection_id !== undefined && query.connection_id !== own) {
            return yield* Errors.fail(
              "permission_error",
              "forbidden",
              "This connection token reads its own connection's events only",
              "connection_id"
            )
          }
          const from = instant(query["created[gte]"])
          const to = instant(query["created[lte]"])
          if (from !== undefined && to !== undefined && from > to) {
            return yield* Errors.fail(
              "validation_error",
              "invalid_parameter",
              "created[gte] must not be after created[lte]",
              "created[gte]"
            )
          }
          const window = Page.toWindow(query)
          const { items, total } = yield* store.list(
            {
              organisationId: principal.organisation.id,
              connectionId: own ?? query.connection_id,
              type: query.type,
              createdFrom: from,
              createdTo: to,
              deliverySuccess: query.delivery_success === undefined ? undefined : query.delivery_success === "true"
            },
            window.offset,
            window.limit
          )
          return Page.fromSlice(query, { items: yield* views(items), total })
        }),
      get: (principal, id) =>
        Effect.gen(function*() {
          const row = yield* store.get(principal.organisation.id, id)
          if (
            Option.isNone(row) ||
            (principal.connection_id !== null && row.value.connection_id !== principal.connection_id)
          ) {
            return yield* Errors.fail("not_found_error", "resource_not_found", `No event with id ${id}`)
          }
          return (yield* views([row.value]))[0]!
        }),
      stream: (principal, bearer, options) =>
        Effect.gen(function*() {
          const own = principal.connection_id
          if (own !== null && options.connectionId !== undefined && options.connectionId !== own) {
            return yield* Errors.fail(
              "permission_error",
              "forbidden",
              "This connection token reads its own connection's events only",
              "connection_id"
            )
          }
          const now = yield* Clock.currentTimeMillis
          const resumed = options.lastEventId === undefined
            ? Option.none<WebhookEventRow>()
            : yield* store.get(principal.organisation.id, options.lastEventId)
          const overlap = Duration.toMillis(STREAM_OVERLAP)
          const filter = {
            organisationId: principal.organisation.id,
            connectionId: own ?? options.connectionId,
            types: options.types
          }
          // the newest event sent, and the ids sent lately (within the overlap behind it)
          const state = {
            cursor: Option.match(resumed, { onNone: () => now, onSome: (r) => r.created_at }),
            sent: new Map<string, number>(Option.isSome(resumed) ? [[resumed.value.id, resumed.value.created_at]] : []),
            lastBeat: now,
            lastAuth: now
          }
          const tick: Effect.Effect<Option.Option<string>> = Effect.gen(function*() {
            if (yield* readiness.draining) return Option.none()
            const at = yield* Clock.currentTimeMillis
            // the token is checked again at each heartbeat: a revoked or expired one ends the stream
            if (at - state.lastAuth >= beat) {
              state.lastAuth = at
              if (Either.isLeft(yield* Effect.either(auth.authenticate(bearer)))) return Option.none()
            }
            const rows = yield* store.since({ ...filter, createdFrom: state.cursor - overlap }, 500)
            let out = ""
            for (const row of rows) {
              if (state.sent.has(row.id)) continue
              state.sent.set(row.id, row.created_at)
              if (row.created_at > state.cursor) state.cursor = row.created_at
              out += frame(row)
            }
            for (const [id, createdAt] of state.sent) {
              if (createdAt < state.cursor - 2 * overlap) state.sent.delete(id)
            }
            if (out === "" && at - state.lastBeat >= beat) out = ": heartbeat\n\n"
            if (out !== "") state.lastBeat = at
            // a full read goes again at once: the backlog is sent as fast as it can be read
            if (rows.length < 500) yield* Effect.sleep(STREAM_POLL)
            return Option.some(out)
          })
          // the first frame says the stream is open (and names the retry delay for EventSource)
          return Stream.concat(
            Stream.succeed("retry: 1000\n: connected\n\n"),
            Stream.repeatEffectOption(
              Effect.flatMap(tick, (next) =>
                Option.isSome(next) ? Effect.succeed(next.value) : Effect.fail(Option.none()))
            ).pipe(Stream.filter((text) =>
              text !== ""
            ))
          )
        })
    }
  })
)

/**
 * How long events are kept (`TRACEBRIDGE_EVENT_RETENTION_DAYS`, default 30, 1 to 3650).
 *
 * @since 0.1.0
 * @category config
 */
export const retentionDays: Config.Config<number> = Config.integer("TRACEBRIDGE_EVENT_RETENTION_DAYS").pipe(
  Config.validate({ message: "must be a whole number of days from 1 to 3650", validation: (n) => n >= 1 && n <= 3650 }),
  Config.withDefault(30)
)

/** Events deleted per statement: a large backlog goes in several short transactions. */
const PRUNE_BATCH = 500

/**
 * Deletes the events older than the retention (with their deliveries and attempts), in batches;
 * how many. An event still being delivered is kept until its delivery ends.
 *
 * @since 0.1.0
 * @category retention
 */
export const prune = (days: number): Effect.Effect<number, never, EventStore> =>
  Effect.gen(function*() {
    const store = yield* EventStore
    const before = (yield* Clock.currentTimeMillis) - days * 86_400_000
    let deleted = 0
    for (;;) {
      const n = yield* store.prune(before, PRUNE_BATCH)
      deleted += n
      if (n < PRUNE_BATCH) return deleted
    }
  })

/**
 * The retention job: a pass at once, then every hour (a worker daemon, `Http.ts`).
 *
 * @since 0.1.0
 * @category retention
 */
export const retention = (days: number): Effect.Effect<never, never, EventStore> =>
  Effect.forever(
    Effect.zipRight(
      Effect.catchAllCause(
        Effect.flatMap(prune(days), (n) =>
          n > 0 ? Effect.logInfo(`events: ${n} past ${days} days deleted`) : Effect.void),
        (cause) =>
          Effect.logError("events retention", cause)
      ),
      Effect.sleep(Duration.hours(1))
    )
  )
