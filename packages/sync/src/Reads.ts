/**
 * Reads answered from the synced store (DECISIONS "Change feed and managed sync"): once a
 * facility's backfill is done, a list or a get of one of its resources is answered from the
 * stored objects, with the list's filters (`Query.matcher`) and paging rules, and no upstream
 * call. A list with `updated_since` is not: the store does not keep the provider's modification
 * times, so it goes to the provider (a short window is cheap there).
 *
 * @since 0.1.0
 */
import type { Page as PageModel } from "@tracebridge/core"
import { Page, Query } from "@tracebridge/core"
import { Effect, Option } from "effect"
import type { FacilityState } from "./SyncStore.js"
import { SyncStore } from "./SyncStore.js"

/**
 * How fresh a stored answer is (`meta.sync`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Freshness {
  readonly status: "backfilling" | "live" | "error"
  readonly last_synced_at: string | null
}

const freshness = (f: FacilityState): Freshness => ({
  status: f.status,
  last_synced_at: f.last_synced_at === null ? null : new Date(f.last_synced_at).toISOString()
})

/**
 * The facility and the resource's count of stored objects when the store can answer for them:
 * the facility backfilled and the resource live. One statement.
 */
const ready = (connectionId: string, facilityId: string, resource: string) =>
  Effect.gen(function*() {
    const store = yield* SyncStore
    const state = yield* store.readState(connectionId, facilityId, resource)
    if (Option.isNone(state) || state.value.facility.backfilled_through === null) return Option.none()
    const { resource: stored } = state.value
    if (Option.isNone(stored) || stored.value.status !== "live") return Option.none()
    return Option.some({ facility: state.value.facility, count: stored.value.count })
  })

/**
 * A page of a list from the store, or none when the store cannot answer it. The page's items are
 * the stored objects' JSON text, as stored: each already is the JSON its GET answers (normalised
 * and checked when the sync stored it), so an answer splices them into its envelope unparsed. A
 * filtered list parses the objects to match them, and still answers their stored text.
 *
 * @since 0.1.0
 * @category reads
 */
export const list = (
  connectionId: string,
  facilityId: string,
  license: string,
  resource: string,
  filters: unknown,
  page: PageModel.PageRequest
) =>
  Effect.gen(function*() {
    const query = filters as Readonly<Record<string, unknown>>
    if (query.updated_since !== undefined) return Option.none()
    const state = yield* ready(connectionId, facilityId, resource)
    if (Option.isNone(state)) return Option.none()
    const store = yield* SyncStore
    const sync = freshness(state.value.facility)
    if (Object.values(query).every((v) => v === undefined)) {
      // no filter: the page's rows only; the total is the resource's count, kept by every write
      const window = Page.toWindow(page)
      const items = yield* store.listWindow(connectionId, facilityId, resource, window.offset, window.limit)
      return Option.some({ page: Page.fromSlice(page, { items, total: state.value.count }), sync })
    }
    const matches = Query.matcher(resource, query, license)
    const all = (yield* store.list(connectionId, facilityId, resource)).filter((body) => matches(JSON.parse(body)))
    return Option.some({ page: Page.paginate(all, page), sync })
  })

/**
 * One object from the store: some(none) when the store knows it has no such object, none when
 * the store cannot answer. The object is its stored JSON text, which is the JSON its GET answers.
 *
 * @since 0.1.0
 * @category reads
 */
export const get = (connectionId: string, facilityId: string, resource: string, id: string) =>
  Effect.gen(function*() {
    const state = yield* ready(connectionId, facilityId, resource)
    if (Option.isNone(state)) return Option.none()
    const store = yield* SyncStore
    // the stored JSON text, as stored: the answer splices it in unparsed (as `list` does)
    const object = yield* store.get(connectionId, facilityId, resource, id)
    return Option.some({ object, sync: freshness(state.value.facility) })
  })
