/**
 * Reading the request log (issue #33), for the dashboard's Logs page: one organisation's requests
 * newest first, narrowed by status class, route template, connection or request id, a page at a
 * time (keyset paging: a cursor names the last row seen, so a page never shifts as new requests
 * arrive); and one request with its bodies and upstream calls. Another organisation's request is
 * not found, as if it did not exist.
 *
 * What is stored is written by `RequestLogCapture.ts` and already redacted.
 *
 * @since 0.1.0
 */
import type { Option } from "effect"
import { Context, Effect, Either, Layer, Schema } from "effect"
import type { Call, Entry, Summary } from "../persistence/RequestLogStore.js"
import { RequestLogStore, StatusClass } from "../persistence/RequestLogStore.js"

/**
 * The filters of a list, as the dashboard's API takes them (all optional; all given must hold).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Filters = Schema.Struct({
  status_class: Schema.optional(StatusClass),
  route: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  connection_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  request_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
})

/**
 * @since 0.1.0
 * @category models
 */
export interface Filters extends Schema.Schema.Type<typeof Filters> {}

/**
 * A cursor that is not one this service gave out.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidCursor extends Schema.TaggedError<InvalidCursor>()("InvalidCursor", {
  message: Schema.String
}) {}

/**
 * One page of a list: the entries, and the cursor of the next page (null on the last).
 *
 * @since 0.1.0
 * @category models
 */
export interface Page {
  readonly items: ReadonlyArray<Summary>
  readonly next_cursor: string | null
}

/**
 * One request with its upstream calls, in the order they were sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface Detail {
  readonly entry: Entry
  readonly calls: ReadonlyArray<Call>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * The organisation's requests, newest first, from `cursor` (the last page's `next_cursor`; none:
   * the newest), at most `limit` (clamped to 1..{@link MAX_LIMIT}).
   */
  readonly list: (
    organisationId: string,
    filters: Filters,
    cursor: string | undefined,
    limit: number
  ) => Effect.Effect<Page, InvalidCursor>
  /** One of the organisation's requests by its request id; none for an unknown or another organisation's. */
  readonly get: (organisationId: string, requestId: string) => Effect.Effect<Option.Option<Detail>>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class RequestLog extends Context.Tag("Services/RequestLog")<RequestLog, Service>() {}

/**
 * The most entries one page holds.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LIMIT = 100

/** A cursor: base64url of `[at, request_id]` of the last row of a page. */
const CursorJson = Schema.parseJson(Schema.Tuple(Schema.Int, Schema.String))
const decodeCursor = Schema.decodeUnknownEither(CursorJson)
const encodeCursor = Schema.encodeSync(CursorJson)

/**
 * The cursor after a row.
 *
 * @since 0.1.0
 * @category cursors
 */
export const cursorAfter = (row: { readonly at: number; readonly request_id: string }): string =>
  Buffer.from(encodeCursor([row.at, row.request_id]), "utf8").toString("base64url")

const parseCursor = (cursor: string) => {
  const decoded = /^[A-Za-z0-9_-]{1,400}$/.test(cursor)
    ? decodeCursor(Buffer.from(cursor, "base64url").toString("utf8"))
    : Either.left(undefined)
  return Either.isRight(decoded)
    ? Effect.succeed({ at: decoded.right[0], request_id: decoded.right[1] })
    : Effect.fail(new InvalidCursor({ message: "The cursor is not one this log gave out; start from the first page" }))
}

/**
 * The read service over the store.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<Service, never, RequestLogStore> = Effect.map(
  RequestLogStore,
  (store): Service => ({
    list: (organisationId, filters, cursor, limit) =>
      Effect.gen(function*() {
        const after = cursor === undefined ? undefined : yield* parseCursor(cursor)
        const size = Math.min(MAX_LIMIT, Math.max(1, Math.floor(limit)))
        const rows = yield* store.list(organisationId, filters, after, size + 1)
        const items = rows.slice(0, size)
        return {
          items,
          next_cursor: rows.length > size ? cursorAfter(items[items.length - 1]!) : null
        }
      }),
    get: (organisationId, requestId) => store.get(organisationId, requestId)
  })
)

/**
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<RequestLog, never, RequestLogStore> = Layer.effect(RequestLog, make)
