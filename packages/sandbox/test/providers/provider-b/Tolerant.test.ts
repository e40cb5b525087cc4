/**
 * Tolerant reads (DECISIONS "Tolerant reads") against BioTrack's one fake: a sync-table row that
 * cannot be read never fails the table; it is left out and reported in the page's `skipped` on
 * every read that uses the table, never dropped silently.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import { Page, ProviderPort } from "@tracebridge/core"
import { Effect, Layer, TestClock } from "effect"
import { httpClient, useUpstream } from "../../support/Upstream.js"
import * as B from "./Support.js"

useUpstream()

const withPort = <A, E>(f: (port: ProviderPort.Service) => Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    yield* TestClock.setTime(B.NOW)
    return yield* f(yield* ProviderPort.ProviderPort)
  }).pipe(Effect.provide(ProviderB.layer.pipe(Layer.provide(httpClient))))

describe("ProviderB tolerant reads", () => {
  it.effect("leaves out a lot whose remaining quantity is not a number, and reports it by barcode", () => {
    const b = B.make()
    const cultivator = b.facility("cultivation")
    const odd = cultivator.packages[2]!
    const edited = b.editNext("sync_inventory", (answer) => ({
      ...answer,
      inventory: B.rowsOf(answer["inventory"]).map((row) =>
        row["id"] === odd.tag ? { ...row, remaining_quantity: "lots" } : row
      )
    }))
    const session = b.session("tolerant")
    return withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.list("packages", session, cultivator.facility.id, {}, { page: 1, per_page: 100 })
        assert.isTrue(edited())
        assert.strictEqual(page.items.length, cultivator.packages.length - 1)
        assert.notInclude(page.items.map((p) => p.tag), odd.tag)
        assert.deepStrictEqual(page.skipped?.map((s) => s.upstream_id), [odd.tag])
        assert.include(page.skipped![0]!.reason, "remaining_quantity")
        // the total counts what the pages deliver (issue #29)
        assert.strictEqual(page.pagination.total, cultivator.packages.length - 1)
        const small = yield* port.list("packages", session, cultivator.facility.id, {}, { page: 2, per_page: 10 })
        assert.strictEqual(small.pagination.total_pages, Math.ceil((cultivator.packages.length - 1) / 10))
        // the table is kept for the connection: the next read reports the row again
        const again = yield* port.list("packages", session, cultivator.facility.id, {}, Page.firstPage)
        assert.deepStrictEqual(again.skipped?.map((s) => s.upstream_id), [odd.tag])
      })
    )
  })

  it.effect("reports nothing when every row reads", () => {
    const b = B.make()
    const cultivator = b.facility("cultivation")
    return withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.list("packages", b.session("clean"), cultivator.facility.id, {}, Page.firstPage)
        assert.isUndefined(page.skipped)
        assert.isAbove(page.items.length, 0)
      })
    )
  })
})
