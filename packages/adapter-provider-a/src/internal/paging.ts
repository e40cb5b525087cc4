import type { ProviderError } from "@tracebridge/core"
import { Page } from "@tracebridge/core"
import { Effect } from "effect"

/** One paged provider list: fetches provider page `n` of `size` items. */
export type Source<W> = (
  pageNumber: number,
  pageSize: number
) => Effect.Effect<Page.Slice<W>, ProviderError.ProviderError>

/**
 * Reads a window of the concatenation of several paged lists (e.g. the vegetative then the
 * flowering plants, or one list per 24 h lastModified window). The first page of every source is
 * read first (it carries the totals); then only the pages that hold the window.
 */
export const readAcross = <W>(
  sources: ReadonlyArray<Source<W>>,
  window: Page.Window,
  pageSize: number
): Effect.Effect<Page.Slice<W>, ProviderError.ProviderError> =>
  Effect.gen(function*() {
    const firsts = yield* Effect.forEach(sources, (source) => source(1, pageSize), { concurrency: 10 })
    const items: Array<W> = []
    let wanted = window.offset
    let remaining = window.limit
    let base = 0
    for (let i = 0; i < sources.length; i++) {
      const first = firsts[i]!
      const total = first.total
      if (remaining > 0 && wanted < base + total) {
        const local = { offset: wanted - base, limit: Math.min(remaining, total - (wanted - base)) }
        const slice = yield* Page.fetchWindow(
          local,
          pageSize,
          (page, size) => (page === 1 ? Effect.succeed(first) : sources[i]!(page, size))
        )
        items.push(...slice.items)
        remaining -= slice.items.length
        wanted = base + total
      }
      base += total
    }
    return { items, total: base }
  })

/** Every item of several paged lists, in order. */
export const readAll = <W>(
  sources: ReadonlyArray<Source<W>>,
  pageSize: number
): Effect.Effect<ReadonlyArray<W>, ProviderError.ProviderError> =>
  Effect.map(readAcross(sources, { offset: 0, limit: Number.POSITIVE_INFINITY }, pageSize), (slice) => slice.items)

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z")

/**
 * The lastModified windows that cover every change at or after `from` up to `to` (now), each at
 * most `hours` long, oldest first (Metrc refuses longer windows, so callers never meet the limit).
 * Metrc's change markers and window bounds are whole seconds: "at or after `from`" starts at the
 * next whole second, and the last window runs to the end of `to`'s second, so that neither a
 * change in the second before `from` nor one in the current second is lost to the rounding.
 */
export const windows = (
  fromMs: number,
  toMs: number,
  hours: number
): ReadonlyArray<{ readonly lastModifiedStart: string; readonly lastModifiedEnd: string }> => {
  const out: Array<{ lastModifiedStart: string; lastModifiedEnd: string }> = []
  const step = hours * 3_600_000
  const first = Math.ceil(fromMs / 1000) * 1000
  const end = Math.floor(toMs / 1000) * 1000 + 1000
  for (let start = first; start < end; start += step) {
    out.push({ lastModifiedStart: iso(start), lastModifiedEnd: iso(Math.min(start + step, end)) })
  }
  return out
}
