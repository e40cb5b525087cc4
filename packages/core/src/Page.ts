/**
 * Pagination: the page request rules of DECISIONS, the pagination object of the envelope,
 * a pure `paginate`, and the mapping of our pages onto a provider's smaller pages.
 *
 * Our pages are 1-indexed with `per_page` 1..100 (default 25). A page past the end is an empty
 * page with the true totals, never an error.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import type { Skipped } from "./Skipped.js"

/**
 * The largest `per_page` a caller may ask for.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_PER_PAGE = 100

/**
 * The `per_page` used when the caller gives none.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_PER_PAGE = 25

/**
 * A query-string integer: digits only (no sign, decimals, exponent or spaces).
 *
 * @since 0.1.0
 * @category schemas
 */
export const IntegerString = Schema.String.pipe(
  Schema.pattern(/^\d{1,9}$/, { message: () => "expected a whole number written in digits" }),
  Schema.compose(Schema.NumberFromString),
  Schema.int()
)

/**
 * `page` and `per_page` as they arrive in a query string. Decoding gives numbers with defaults.
 * No identifier: a query string's fields are documented one parameter each, never as a reference.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PageRequest = Schema.Struct({
  page: Schema.optionalWith(
    IntegerString.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "page must be 1 or more" })),
    { default: () => 1 }
  ).annotations({ description: "1-indexed page number (default 1)" }),
  per_page: Schema.optionalWith(
    IntegerString.pipe(
      Schema.between(1, MAX_PER_PAGE, { message: () => `per_page must be between 1 and ${MAX_PER_PAGE}` })
    ),
    { default: () => DEFAULT_PER_PAGE }
  ).annotations({ description: `Items per page, 1 to ${MAX_PER_PAGE} (default ${DEFAULT_PER_PAGE})` })
})

/**
 * @since 0.1.0
 * @category models
 */
export interface PageRequest extends Schema.Schema.Type<typeof PageRequest> {}

/**
 * The first page at the default size.
 *
 * @since 0.1.0
 * @category constants
 */
export const firstPage: PageRequest = { page: 1, per_page: DEFAULT_PER_PAGE }

/**
 * The `pagination` object of a list response.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Pagination = Schema.Struct({
  page: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  per_page: Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)),
  total: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)).annotations({ description: "Items across all pages" }),
  total_pages: Schema.Int.pipe(Schema.greaterThanOrEqualTo(0))
}).annotations({ identifier: "Pagination" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Pagination extends Schema.Schema.Type<typeof Pagination> {}

/**
 * A stretch of a list: items `offset` to `offset + limit - 1` (0-based).
 *
 * @since 0.1.0
 * @category models
 */
export interface Window {
  readonly offset: number
  readonly limit: number
}

/**
 * What a driver returns for a window: the items in it and the total across the whole list.
 *
 * @since 0.1.0
 * @category models
 */
export interface Slice<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  /** Upstream rows of the window left out because they could not be mapped (tolerant reads). */
  readonly skipped?: ReadonlyArray<Skipped> | undefined
}

/**
 * One page of a list, with its pagination.
 *
 * @since 0.1.0
 * @category models
 */
export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly pagination: Pagination
  /** Upstream rows of the page left out because they could not be mapped (tolerant reads). */
  readonly skipped?: ReadonlyArray<Skipped> | undefined
}

/**
 * The window a page request covers.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toWindow = (request: PageRequest): Window => ({
  offset: (request.page - 1) * request.per_page,
  limit: request.per_page
})

/**
 * The pagination object for a list of `total` items.
 *
 * @since 0.1.0
 * @category constructors
 */
export const pagination = (request: PageRequest, total: number): Pagination => ({
  page: request.page,
  per_page: request.per_page,
  total,
  total_pages: Math.ceil(total / request.per_page)
})

/**
 * A page built from a driver's slice.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromSlice = <A>(request: PageRequest, slice: Slice<A>): Page<A> => ({
  items: slice.items,
  pagination: pagination(request, slice.total),
  ...(slice.skipped === undefined || slice.skipped.length === 0 ? {} : { skipped: slice.skipped })
})

/**
 * The window of a whole in-memory list.
 *
 * @since 0.1.0
 * @category constructors
 */
export const sliceOf = <A>(all: ReadonlyArray<A>, window: Window): Slice<A> => ({
  items: all.slice(window.offset, window.offset + window.limit),
  total: all.length
})

/**
 * One page of a whole in-memory list.
 *
 * @since 0.1.0
 * @category constructors
 */
export const paginate = <A>(all: ReadonlyArray<A>, request: PageRequest): Page<A> =>
  fromSlice(request, sliceOf(all, toWindow(request)))

/**
 * Which provider pages (1-based, of `pageSize` items) hold a window, and how many items of the
 * first of them come before it.
 *
 * @since 0.1.0
 * @category provider paging
 */
export const providerPages = (
  window: Window,
  pageSize: number
): { readonly first: number; readonly last: number; readonly skip: number } => {
  const first = Math.floor(window.offset / pageSize) + 1
  const last = Math.floor((window.offset + Math.max(window.limit, 1) - 1) / pageSize) + 1
  return { first, last, skip: window.offset - (first - 1) * pageSize }
}

/**
 * Reads a window through a provider that serves fixed-size pages: fetches the first page that
 * holds the window (which also gives the total), then the rest of the needed pages, and slices.
 * A window past the end costs one request and gives an empty slice with the true total.
 *
 * @since 0.1.0
 * @category provider paging
 */
export const fetchWindow = <A, E, R>(
  window: Window,
  pageSize: number,
  fetchPage: (page: number, pageSize: number) => Effect.Effect<Slice<A>, E, R>,
  options: { readonly concurrency?: number } = {}
): Effect.Effect<Slice<A>, E, R> =>
  Effect.gen(function*() {
    const { first, last, skip } = providerPages(window, pageSize)
    const head = yield* fetchPage(first, pageSize)
    const available = Math.max(0, Math.ceil(head.total / pageSize))
    const rest = yield* Effect.forEach(
      range(first + 1, Math.min(last, available)),
      (page) => fetchPage(page, pageSize),
      { concurrency: options.concurrency ?? 4 }
    )
    const items = [head, ...rest].flatMap((slice) => slice.items)
    const total = rest.length > 0 ? rest[rest.length - 1]!.total : head.total
    return { items: items.slice(skip, skip + window.limit), total }
  })

const range = (from: number, to: number): Array<number> => {
  const out: Array<number> = []
  for (let i = from; i <= to; i++) out.push(i)
  return out
}
