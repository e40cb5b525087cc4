/**
 * The scheduler's pass (`Polls.tick`): a node claims no more due facilities than it has room to
 * poll, so that what it cannot start stays due in the shared store for any node with room, and a
 * facility is never claimed again while an earlier claim of it still waits in a node's queue.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { Jobs } from "../src/Jobs.js"
import * as Polls from "../src/Polls.js"
import * as Sync from "../src/Sync.js"
import * as SyncStore from "../src/SyncStore.js"
import * as TempStore from "./support/TempStore.js"

const FACILITIES = 40

/** Polls that never finish (the host never opens the connection), on a store of live facilities. */
const setup = () => {
  const opened: Array<string> = []
  const host = Layer.succeed(Sync.Host, {
    open: (connectionId) => Effect.zipRight(Effect.sync(() => void opened.push(connectionId)), Effect.never),
    updatesAvailable: () => Effect.void,
    loginRequired: () => Effect.void,
    degraded: () => Effect.void,
    backfilled: () => Effect.void
  })
  const ids = Array.from({ length: FACILITIES }, (_, i) => `fac_${i}`)
  const roster = Layer.succeed(Sync.Roster, { facilities: () => Effect.succeed(Option.some(new Set(ids))) })
  const jobs = Layer.succeed(Jobs, { start: () => Effect.void, restartStalled: Effect.succeed(0) })
  const deps = Layer.mergeAll(host, roster, jobs, Layer.succeed(Sync.SyncSettings, Sync.defaults)).pipe(
    Layer.provideMerge(TempStore.layer())
  )
  return { ids, opened, layer: Layer.provideMerge(Polls.layer, deps) }
}

describe("Polls.tick", () => {
  it.scoped("claims no more due facilities than the node can poll at once; the rest stay due", () => {
    const { ids, layer, opened } = setup()
    return Effect.gen(function*() {
      const store = yield* SyncStore.SyncStore
      for (const id of ids) {
        yield* store.ensureFacility("conn_1", id, 0)
        yield* store.updateFacility("conn_1", id, { status: "live", next_poll_at: 0, last_synced_at: 0 })
      }
      const polls = yield* Polls.Polls
      const first = yield* polls.tick
      yield* Effect.yieldNow()
      assert.isAtMost(first.polls, Polls.CONCURRENCY, "one tick claims at most the node's room")
      assert.isAbove(first.polls, 0)
      // every slot is still busy: the next tick claims nothing more
      const second = yield* polls.tick
      assert.strictEqual(second.polls, 0, "no room, no claim")
      // what was not claimed is still due, for any node with room
      const due = yield* store.claimDue(0, Sync.defaults.pollIntervalMs, FACILITIES)
      assert.strictEqual(due.length, FACILITIES - first.polls)
      assert.isAtMost(opened.length, Polls.CONCURRENCY)
    }).pipe(Effect.provide(layer))
  })
})
