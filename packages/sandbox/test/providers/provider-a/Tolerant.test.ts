/**
 * Tolerant reads (DECISIONS "Tolerant reads") against Metrc's one fake: one row that cannot be
 * read never fails the page; it is left out and reported in the page's `skipped`, never dropped
 * silently. The page wrapper itself must still decode.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ProviderError } from "@tracebridge/core"
import { Effect } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

describe("ProviderA tolerant reads", () => {
  it.effect("leaves out a package whose Quantity is not a number, and reports it by label in skipped", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const odd = cultivator.packages[3]!
    a.edit(/^\/packages\/v2\/active$/, (answer) => ({
      ...answer,
      Data: answer.Data.map((p: any) => (p.Label === odd.tag ? { ...p, Quantity: "lots" } : p))
    }))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.list("packages", a.session(), cultivator.facility.id, {}, { page: 1, per_page: 100 })
        assert.strictEqual(page.items.length, cultivator.packages.length - 1)
        assert.notInclude(page.items.map((p) => p.tag), odd.tag)
        // the total counts what the pages deliver, not Metrc's rows (issue #29)
        assert.strictEqual(page.pagination.total, cultivator.packages.length - 1)
        assert.strictEqual(page.pagination.total_pages, 1)
        assert.strictEqual(page.skipped?.length, 1)
        assert.strictEqual(page.skipped![0]!.upstream_id, odd.tag)
        assert.include(page.skipped![0]!.reason, "Quantity")
        // listAll reads past the gap: every other package once
        const all = yield* port.listAll("packages", a.session(), cultivator.facility.id, {})
        assert.strictEqual(all.length, cultivator.packages.length - 1)
      })
    )
  })

  it.effect("leaves out an item the mapper refuses (no Name), by its Id", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const odd = cultivator.items[0]!
    a.edit(/^\/items\/v2\/active$/, (answer) => ({
      ...answer,
      Data: answer.Data.map((i: any) => (String(i.Id) === odd.provider_item_id ? { ...i, Name: null } : i))
    }))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.list("items", a.session(), cultivator.facility.id, {}, { page: 1, per_page: 100 })
        assert.strictEqual(page.items.length, cultivator.items.length - 1)
        assert.deepStrictEqual(page.skipped?.map((s) => s.upstream_id), [odd.provider_item_id])
      })
    )
  })

  it.effect("counts a skipped row in no total: a client paging by total gets every item it was promised", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const vegetative = cultivator.plants.filter((p) => p.growth_phase === "vegetative")
    const odd = vegetative[1]!
    const unnamed = cultivator.packages[3]!
    // a package the mapper refuses (no item name) and a plant that cannot be decoded
    a.edit(/^\/packages\/v2\/active$/, (answer) => ({
      ...answer,
      Data: answer.Data.map((p: any) => (p.Label === unnamed.tag ? { ...p, Item: { ...p.Item, Name: null } } : p))
    }))
    a.edit(/^\/plants\/v2\/vegetative$/, (answer) => ({
      ...answer,
      Data: answer.Data.map((p: any) => (p.Label === odd.tag ? { ...p, StrainName: null } : p))
    }))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const session = a.session()
        for (
          const [resource, query] of [["packages", {}], ["plants", {}], ["plants", {
            growth_phase: "vegetative"
          }]] as const
        ) {
          const facility = cultivator.facility.id
          // walk the pages by the first page's total, as a client does
          const first = yield* port.list(resource, session, facility, query as never, { page: 1, per_page: 5 })
          const delivered: Array<string> = [...first.items.map((x: any) => x.id)]
          for (let n = 2; n <= first.pagination.total_pages; n++) {
            const page = yield* port.list(resource, session, facility, query as never, { page: n, per_page: 5 })
            assert.strictEqual(page.pagination.total, first.pagination.total, `${resource} page ${n}`)
            delivered.push(...page.items.map((x: any) => x.id))
          }
          assert.strictEqual(delivered.length, first.pagination.total, `${resource} ${JSON.stringify(query)}`)
          assert.strictEqual(new Set(delivered).size, delivered.length)
          assert.strictEqual(first.pagination.total_pages, Math.ceil(first.pagination.total / 5))
          assert.strictEqual(first.skipped?.length, 1, `${resource}: the skipped row is reported`)
        }
      })
    )
  })

  it.effect("still fails a page whose wrapper cannot be read (no Data)", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    a.edit(/^\/items\/v2\/active$/, (answer) => ({ ...answer, Data: "none" }))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(
          port.list("items", a.session(), cultivator.facility.id, {}, { page: 1, per_page: 10 })
        )
        assert.strictEqual((error as ProviderError.ProviderError)._tag, "ProviderInvalidResponse")
      })
    )
  })
})
