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
        assert.strictEqual(page.pagination.total, cultivator.packages.length, "the total is Metrc's")
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
