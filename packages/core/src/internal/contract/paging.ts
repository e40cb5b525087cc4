/**
 * Paging of a claimed list: consistent totals, pages that echo the request and hold the whole
 * list's slice, per_page 1 and per_page 100 walking every item once in order, and a page past the
 * end that is empty with the true total.
 */
import { Effect } from "effect"
import * as Page from "../../Page.js"
import type * as Resource from "../../Resource.js"
import { deepEqual } from "../equal.js"
import { check, facilityOf, idOf, listed } from "./kit.js"

/** Pages 1, 2, 3 and the last at a third of the list hold the whole list's slices, with one total. */
export const pagingCheck = (name: Resource.Name) =>
  check(`${name}: lists paginate consistently`, (port, fx, assert) =>
    Effect.gen(function*() {
      const all = yield* port.listAll(name, fx.session, facilityOf(fx, name), {})
      yield* assert(all.length >= 2, `the fixture facility must hold at least 2 ${name} (it has ${all.length})`)
      yield* assert(new Set(all.map(idOf)).size === all.length, "ids repeat across the list")
      const perPage = Math.min(Page.MAX_PER_PAGE, Math.max(1, Math.ceil(Math.min(all.length, 300) / 3)))
      const first = yield* port.list(name, fx.session, facilityOf(fx, name), {}, { page: 1, per_page: perPage })
      const { total, total_pages } = first.pagination
      yield* assert(total === all.length, `page 1 says total ${total}, the whole list has ${all.length}`)
      yield* assert(total_pages === Math.ceil(total / perPage), `total_pages ${total_pages} for ${total} at ${perPage}`)
      const pages = [...new Set([1, 2, 3, total_pages].filter((p) => p >= 1 && p <= total_pages))]
      for (const n of pages) {
        const page = n === 1
          ? first
          : yield* port.list(name, fx.session, facilityOf(fx, name), {}, { page: n, per_page: perPage })
        const expected = all.slice((n - 1) * perPage, n * perPage).map(idOf)
        yield* assert(
          page.pagination.total === total,
          `page ${n} says total ${page.pagination.total}, page 1 said ${total}`
        )
        yield* assert(
          page.pagination.page === n && page.pagination.per_page === perPage,
          `page ${n} echoes the request`
        )
        yield* assert(
          deepEqual(page.items.map(idOf), expected),
          `page ${n} at per_page ${perPage} holds [${page.items.map(idOf)}], expected [${expected}]`
        )
      }
      const past = yield* port.list(name, fx.session, facilityOf(fx, name), {}, {
        page: total_pages + 1,
        per_page: perPage
      })
      yield* assert(past.items.length === 0, `the page past the end holds ${past.items.length} items`)
      yield* assert(past.pagination.total === total, `the page past the end says total ${past.pagination.total}`)
    }))

/** Walks every page at `perPage` and compares it with the whole list, then the page past the end. */
export const walkCheck = (name: Resource.Name, perPage: number, title: string) =>
  check(`${name}: ${title}`, (port, fx, assert) =>
    Effect.gen(function*() {
      const facilityId = facilityOf(fx, name)
      const all = (yield* port.listAll(name, fx.session, facilityId, {})).map(idOf)
      const total = all.length
      const totalPages = Math.ceil(total / perPage)
      const seen: Array<string> = []
      for (let n = 1; n <= Math.max(1, totalPages); n++) {
        const page = yield* port.list(name, fx.session, facilityId, {}, { page: n, per_page: perPage })
        const { pagination } = page
        yield* assert(
          pagination.total === total && pagination.total_pages === totalPages,
          `page ${n} at per_page ${perPage} says total ${pagination.total} in ${pagination.total_pages} pages; ` +
            `the whole list has ${total} (${totalPages} pages)`
        )
        yield* assert(
          pagination.page === n && pagination.per_page === perPage,
          `page ${n} at per_page ${perPage} echoes page ${pagination.page}, per_page ${pagination.per_page}`
        )
        const expected = all.slice((n - 1) * perPage, n * perPage)
        const ids = page.items.map(idOf)
        yield* assert(
          deepEqual(ids, expected),
          `page ${n} at per_page ${perPage} holds ${listed(ids)}, expected ${listed(expected)}`
        )
        seen.push(...ids)
      }
      yield* assert(new Set(seen).size === seen.length, `the pages at per_page ${perPage} repeat an item`)
      yield* assert(seen.length === total, `the pages at per_page ${perPage} hold ${seen.length} of ${total} items`)
      const past = yield* port.list(name, fx.session, facilityId, {}, { page: totalPages + 1, per_page: perPage })
      yield* assert(
        past.items.length === 0 && past.pagination.total === total && past.pagination.total_pages === totalPages,
        `page ${totalPages + 1} (past the end) at per_page ${perPage} holds ${past.items.length} items, ` +
          `says total ${past.pagination.total} in ${past.pagination.total_pages} pages`
      )
    }))
