/**
 * The synced store on SQLite (libsql, a temporary file): a page is stored once, an unchanged object adds
 * no change, sequences only grow, a sweep removes what a new generation did not see, and the feed
 * never skips or repeats a change while writers run beside a reader (a property test).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as fc from "fast-check"
import * as SyncStore from "../src/SyncStore.js"
import { statements } from "./support/Statements.js"
import * as TempStore from "./support/TempStore.js"

const StoreLive = TempStore.layer

const obj = (id: string, v: number) => ({ object_id: id, body: JSON.stringify({ id, v }) })

const put = (objects: ReadonlyArray<{ object_id: string; body: string }>, extra: Partial<SyncStore.Apply> = {}) =>
  Effect.flatMap(SyncStore.SyncStore, (s) =>
    s.apply({
      connection_id: "conn_1",
      facility_id: "fac_1",
      resource: "packages",
      generation: 0,
      objects,
      cursor: {},
      now: 1000,
      ...extra
    }))

describe("SyncStore", () => {
  it.effect("stores a page once: a repeat adds no change, a changed object moves to a new sequence", () =>
    Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      assert.strictEqual(yield* put([obj("a", 1), obj("b", 1)]), 2)
      assert.strictEqual(yield* put([obj("a", 1), obj("b", 1)]), 0)
      assert.strictEqual(yield* put([obj("a", 2)]), 1)
      const feed = yield* store.feed("conn_1", "fac_1", 0, 100, [])
      assert.deepStrictEqual(feed.map((c) => [c.object_id, c.seq]), [["b", 2], ["a", 3]])
      assert.deepStrictEqual(JSON.parse(feed[1]!.body!), { id: "a", v: 2 })
      assert.deepStrictEqual((yield* store.resources("conn_1", "fac_1"))[0]!.count, 2)
    }).pipe(Effect.provide(StoreLive())))

  it.effect("a poll's empty page moves the resource's cursor in one statement, and changes nothing else", () =>
    Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      // the first page makes the resource's row (the whole path)
      assert.strictEqual(
        yield* put([obj("a", 1), obj("b", 1)], { cursor: { status: "live", synced_through: 1000 } }),
        2
      )
      const before = (yield* store.resources("conn_1", "fac_1"))[0]!
      const [changes, count] = yield* statements(
        put([], { now: 2000, cursor: { status: "live", synced_through: 2000, last_synced_at: 2000, last_error: null } })
      )
      assert.strictEqual(changes, 0)
      assert.strictEqual(count, 1)
      const after = (yield* store.resources("conn_1", "fac_1"))[0]!
      assert.deepStrictEqual(after, { ...before, synced_through: 2000, last_synced_at: 2000 })
      assert.deepStrictEqual((yield* store.feed("conn_1", "fac_1", 0, 100, [])).map((c) => c.seq), [1, 2])
      // a resource with no row yet takes the whole path, which makes it
      const [, made] = yield* statements(
        put([], { resource: "plants", cursor: { status: "live", synced_through: 2000 } })
      )
      assert.isAbove(made, 1)
      const plants = (yield* store.resources("conn_1", "fac_1")).find((r) => r.resource === "plants")!
      assert.deepStrictEqual([plants.status, plants.synced_through, plants.count], ["live", 2000, 0])
      // a backfill's empty page (not live) still takes the whole path: it beats the facility's heartbeat
      const [, backfill] = yield* statements(
        put([], { now: 3000, cursor: { status: "backfilling", window_from: 5000, page: 1 } })
      )
      assert.isAbove(backfill, 1)
      assert.strictEqual(Option.getOrThrow(yield* store.facility("conn_1", "fac_1")).heartbeat_at, 3000)
    }).pipe(Effect.provide(StoreLive())))

  it.effect("a sweep at a new generation removes what it did not see", () =>
    Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      yield* put([obj("a", 1), obj("b", 1)])
      assert.strictEqual(yield* put([obj("a", 1)], { generation: 1, sweep: true }), 1)
      const feed = yield* store.feed("conn_1", "fac_1", 2, 100, [])
      assert.deepStrictEqual(feed.map((c) => [c.object_id, c.body]), [["b", null]])
      assert.deepStrictEqual(yield* store.ids("conn_1", "fac_1", "packages"), ["a"])
      assert.deepStrictEqual(yield* store.feed("conn_1", "fac_1", 0, 100, ["plants"]), [])
    }).pipe(Effect.provide(StoreLive())))

  it.effect("claims due facilities once and moves their next poll on by the interval, from when it was due", () =>
    Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      const nextPoll = Effect.map(
        store.facility("conn_1", "fac_1"),
        (o) => o._tag === "Some" && o.value.next_poll_at
      )
      yield* store.ensureFacility("conn_1", "fac_1", 0)
      yield* store.updateFacility("conn_1", "fac_1", { status: "live", next_poll_at: 500 })
      assert.strictEqual((yield* store.claimDue(1000, 300_000, 10)).length, 1)
      assert.strictEqual((yield* store.claimDue(1000, 300_000, 10)).length, 0)
      // Due at 500, claimed at 1000: next due at 300,500, not 301,000. A claim's delay does not
      // push every later poll back (issue #35, bench row 14: 10 of 1,502 polls were lost that way
      // in 5 minutes at a 30 s interval).
      assert.strictEqual(yield* nextPoll, 300_500)
      // A claim more than an interval late starts again from the claim: no burst to catch up.
      assert.strictEqual((yield* store.claimDue(700_000, 300_000, 10)).length, 1)
      assert.strictEqual(yield* nextPoll, 1_000_000)
    }).pipe(Effect.provide(StoreLive())))

  it.effect("the feed never skips or repeats a change while writers run beside a paging reader", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.array(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 3 })), { maxLength: 6 }),
            {
              minLength: 1,
              maxLength: 8
            }
          ),
          fc.integer({ min: 1, max: 4 }),
          (batches, limit) =>
            Effect.runPromise(
              Effect.gen(function*() {
                const store = yield* SyncStore.SyncStore
                yield* store.ensureFacility("conn_1", "fac_1", 0)
                const seen: Array<number> = []
                const view = new Map<string, string | null>()
                let cursor = 0
                const readPage = Effect.gen(function*() {
                  const page = yield* store.feed("conn_1", "fac_1", cursor, limit, [])
                  for (const c of page) {
                    seen.push(c.seq)
                    view.set(c.object_id, c.body)
                  }
                  if (page.length > 0) cursor = page[page.length - 1]!.seq
                  return page.length
                })
                const writers = Effect.forEach(
                  batches,
                  (batch) => put(batch.map(([id, v]) => obj(`o${id}`, v))),
                  { concurrency: 3, discard: true }
                )
                const reader = Effect.repeatN(readPage, batches.length * 3)
                yield* Effect.all([writers, reader], { concurrency: 2 })
                while ((yield* readPage) > 0) { /* drain */ }
                // every sequence read once, in order
                for (let i = 1; i < seen.length; i++) assert.isTrue(seen[i]! > seen[i - 1]!)
                // the reader's view is the store's
                const finalIds = yield* store.ids("conn_1", "fac_1", "packages")
                const live = [...view.entries()].filter(([, b]) => b !== null).map(([id]) => id).sort()
                assert.deepStrictEqual(live, [...finalIds].sort())
                for (const id of finalIds) {
                  assert.strictEqual(
                    view.get(id),
                    yield* Effect.map(
                      store.get("conn_1", "fac_1", "packages", id),
                      (o) => o._tag === "Some" ? o.value : null
                    )
                  )
                }
              }).pipe(Effect.provide(StoreLive()))
            )
        ),
        { numRuns: 15 }
      )
    ))
})
