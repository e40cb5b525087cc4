import { assert, describe, it } from "@effect/vitest"
import { ProviderPort, Skipped } from "@tracebridge/core"
import { Effect } from "effect"
import * as Memory from "./support/MemoryDriver.js"

const { facilityId, session } = Memory

describe("Skipped", () => {
  it.effect("collects the rows reported by a read, from forked fibers too, each once", () =>
    Effect.gen(function*() {
      const row = { upstream_id: "1004", reason: "Quantity: expected a number" }
      const [value, skipped] = yield* Skipped.collect(
        Effect.forEach(
          [row, { upstream_id: "1005", reason: "LastModified: not a date" }, row],
          (r) => Effect.as(Skipped.report(r), r.upstream_id),
          { concurrency: 3 }
        )
      )
      assert.deepStrictEqual(value, ["1004", "1005", "1004"])
      assert.deepStrictEqual(skipped.map((r) => r.upstream_id), ["1004", "1005"])
      // outside a collect, a report goes nowhere (and a later collect starts empty)
      yield* Skipped.report(row)
      const [, none] = yield* Skipped.collect(Effect.void)
      assert.deepStrictEqual(none, [])
    }))

  it("unions two reports without repeating a row", () => {
    const a = [{ upstream_id: "1", reason: "x" }]
    assert.deepStrictEqual(Skipped.union(a, [{ upstream_id: "1", reason: "x" }, { upstream_id: "2", reason: "y" }]), [
      { upstream_id: "1", reason: "x" },
      { upstream_id: "2", reason: "y" }
    ])
  })

  it.effect("a port list carries the rows its driver skipped, and listAll still reads every window", () =>
    Effect.gen(function*() {
      const memory = Memory.make()
      const packages = memory.resources.packages!
      // a driver that leaves out (and reports) the fourth package of every window it reads
      const driver: ProviderPort.Driver = {
        ...memory,
        resources: {
          ...memory.resources,
          packages: {
            ...packages,
            list: (s, f, q, window) =>
              Effect.flatMap(packages.list(s, f, q, window), (slice) =>
                Effect.as(
                  Skipped.report({ upstream_id: "P3", reason: "Quantity: expected a number" }),
                  { ...slice, items: slice.items.filter((p: any) => p.provider_package_id !== "P3") }
                ))
          }
        }
      }
      const port = ProviderPort.make(driver)
      const page = yield* port.list("packages", session, facilityId, {}, { page: 1, per_page: 5 })
      assert.deepStrictEqual(page.skipped, [{ upstream_id: "P3", reason: "Quantity: expected a number" }])
      assert.strictEqual(page.items.length, 4)
      assert.strictEqual(page.pagination.total, 12, "the total is the upstream list's")
      const all = yield* port.listAll("packages", session, facilityId, {})
      assert.strictEqual(all.length, 11, "every other package, once")
      assert.strictEqual(new Set(all.map((p) => p.id)).size, 11)
    }))
})
