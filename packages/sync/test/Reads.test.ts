/**
 * Reads from the synced store (`Reads.list`, `Reads.get`) on SQLite: a live resource's page is
 * answered from the stored objects with its total, in two statements (the facility with the
 * resource's state, then the page's rows); a facility or resource that is not live yet is not
 * answered from the store.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Reads from "../src/Reads.js"
import * as SyncStore from "../src/SyncStore.js"
import { statements } from "./support/Statements.js"
import * as TempStore from "./support/TempStore.js"

const packages = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ object_id: `p${i}`, body: JSON.stringify({ id: `p${i}` }) }))

/** A facility whose packages (n of them, then `removed` of them gone) are stored and live. */
const stored = (n: number, removed: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const store = yield* SyncStore.SyncStore
    yield* store.ensureFacility("conn_1", "fac_1", 0)
    const put = (objects: ReadonlyArray<{ object_id: string; body: string }>, gone: ReadonlyArray<string>) =>
      store.apply({
        connection_id: "conn_1",
        facility_id: "fac_1",
        resource: "packages",
        generation: 0,
        objects,
        removed: gone,
        cursor: { status: "live", synced_through: 1000, last_synced_at: 1000 },
        now: 1000
      })
    yield* put(packages(n), [])
    if (removed.length > 0) yield* put([], removed)
    yield* store.updateFacility("conn_1", "fac_1", { status: "live", backfilled_through: 1000, last_synced_at: 1000 })
  })

const list = (page: number, perPage: number) =>
  Reads.list("conn_1", "fac_1", "LIC-1", "packages", {}, { page, per_page: perPage })

describe("Reads", () => {
  it.effect("a live resource's page comes from the store with its total, in two statements", () =>
    Effect.gen(function*() {
      yield* stored(25, ["p3"])
      const [answer, count] = yield* statements(list(2, 10))
      const read = Option.getOrThrow(answer)
      assert.strictEqual(count, 2)
      assert.deepStrictEqual(read.page.items.map((body) => JSON.parse(body).id), [
        "p11",
        "p12",
        "p13",
        "p14",
        "p15",
        "p16",
        "p17",
        "p18",
        "p19",
        "p20"
      ])
      assert.strictEqual(read.page.pagination.total, 24, "the removed package is not counted")
      assert.deepStrictEqual(read.sync, { status: "live", last_synced_at: new Date(1000).toISOString() })
      // past the end: no item, the same total
      const past = Option.getOrThrow(yield* list(4, 10))
      assert.deepStrictEqual([past.page.items.length, past.page.pagination.total], [0, 24])
    }).pipe(Effect.provide(TempStore.layer())))

  it.effect("a facility still backfilling, or a resource that is not live, is not answered from the store", () =>
    Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      assert.isTrue(Option.isNone(yield* list(1, 10)), "backfilling")
      yield* stored(3)
      assert.isTrue(Option.isSome(yield* list(1, 10)))
      assert.isTrue(
        Option.isNone(yield* Reads.list("conn_1", "fac_1", "LIC-1", "plants", {}, { page: 1, per_page: 10 })),
        "no plants row"
      )
      assert.isTrue(
        Option.isNone(yield* Reads.list("conn_1", "fac_2", "LIC-1", "packages", {}, { page: 1, per_page: 10 }))
      )
      const one = Option.getOrThrow(yield* Reads.get("conn_1", "fac_1", "packages", "p1"))
      assert.deepStrictEqual(Option.map(one.object, (body) => JSON.parse(body).id), Option.some("p1"))
    }).pipe(Effect.provide(TempStore.layer())))
})
