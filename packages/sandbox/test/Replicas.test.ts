/**
 * `Replicas` on one in-memory `ChangeLog` shared by two `Sandbox` stores, as two processes share a
 * database: a write in one is read in the other; a write that loses the race runs again on the
 * other's world and is stored after it; after `MAX_ATTEMPTS` lost races it fails with
 * `WriteConflict` and leaves nothing uncommitted in memory; a reset or a fault set in one is
 * served in the other.
 */
import { assert, describe, it } from "@effect/vitest"
import { ChangeLog, Registry, Replicas, Sandbox } from "@tracebridge/sandbox"
import { Effect, Either, Option } from "effect"

const ID = "conn_state"
const KEY = Sandbox.keyOf("provider_a", "CO", "user_good")

const hold = (at: number): Sandbox.Change => ({
  _tag: "Scenario",
  input: { name: "package_hold", params: {}, at }
})

/** One process: its own sandbox and replicas, on the shared change log. */
const processOn = (changeLog: ChangeLog.ChangeLog) => {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: "2026-03-15T00:00:00.000Z",
    now: () => 0
  })
  const replicas = Replicas.make({ sandbox, changeLog })
  /** What the host's record says now (read at the start of a request). */
  const reference = Effect.map(changeLog.read(ID, 0), (stored): Replicas.Reference => {
    const { fault, version } = Option.getOrThrow(stored)
    return {
      id: ID,
      provider: "provider_a",
      state: "CO",
      login: "user_good",
      referenceDate: "2026-03-15T00:00:00.000Z",
      version,
      fault
    }
  })
  const onHold = () =>
    sandbox.world("provider_a", "CO", "user_good").facilities.flatMap((f) => f.packages).filter((p) => p.is_on_hold)
      .length
  /** Reads the number of packages on hold, as a request would. */
  const read = Effect.flatMap(reference, (r) => replicas.read(r, Effect.sync(onHold)))
  /** Holds a package; `meanwhile` runs after the change and before the commit. */
  const write = (at: number, meanwhile: Effect.Effect<void, Replicas.WriteConflict> = Effect.void) =>
    Effect.flatMap(reference, (r) =>
      replicas.write(r, (commit) =>
        Effect.gen(function*() {
          assert.isTrue(Either.isRight(sandbox.apply(replicas.world(r), hold(at))))
          yield* meanwhile
          yield* commit
        })))
  return { sandbox, replicas, reference, onHold, read, write }
}

const setup = () => {
  const changeLog = ChangeLog.memory()
  return { changeLog, a: processOn(changeLog), b: processOn(changeLog) }
}

describe("Replicas", () => {
  it.effect("a write in one process is read in the other", () =>
    Effect.gen(function*() {
      const { a, b, changeLog } = setup()
      const seeded = yield* b.read
      assert.strictEqual(yield* a.read, seeded)
      yield* a.write(1)
      assert.strictEqual(yield* b.read, seeded + 1)
      yield* b.write(2)
      assert.strictEqual(yield* a.read, seeded + 2)
      const stored = Option.getOrThrow(yield* changeLog.read(ID, 0))
      assert.strictEqual(stored.version, 2)
      assert.deepStrictEqual(stored.changes, [hold(1), hold(2)])
    }))

  it.effect("a write that loses the race runs again on the other process's world, and is stored after it", () =>
    Effect.gen(function*() {
      const { a, b, changeLog } = setup()
      const seeded = yield* a.read
      let runs = 0
      const seen: Array<number> = []
      // b commits its hold after a has changed its world and before a commits
      const race = Effect.suspend(() => {
        seen.push(a.onHold())
        return runs++ === 0 ? b.write(1) : Effect.void
      })
      yield* a.write(2, race)
      assert.strictEqual(runs, 2)
      assert.deepStrictEqual(seen, [seeded + 1, seeded + 2], "the second run was on b's world")
      const stored = Option.getOrThrow(yield* changeLog.read(ID, 0))
      assert.deepStrictEqual(stored.changes, [hold(1), hold(2)])
      assert.strictEqual(yield* a.read, seeded + 2)
      assert.strictEqual(yield* b.read, seeded + 2)
    }))

  it.effect("after MAX_ATTEMPTS lost races: WriteConflict, and nothing uncommitted is served", () =>
    Effect.gen(function*() {
      const { a, b, changeLog } = setup()
      const seeded = yield* a.read
      let runs = 0
      const race = Effect.suspend(() => b.write(100 + runs++))
      const failed = yield* Effect.flip(a.write(1, race))
      assert.instanceOf(failed, Replicas.WriteConflict)
      assert.strictEqual(failed.attempts, Replicas.MAX_ATTEMPTS)
      assert.strictEqual(runs, Replicas.MAX_ATTEMPTS)
      const stored = Option.getOrThrow(yield* changeLog.read(ID, 0))
      assert.strictEqual(stored.version, Replicas.MAX_ATTEMPTS)
      assert.isFalse(stored.changes.some((c) => c._tag === "Scenario" && c.input.at === 1))
      assert.strictEqual(yield* a.read, seeded + Replicas.MAX_ATTEMPTS)
      assert.strictEqual(yield* b.read, seeded + Replicas.MAX_ATTEMPTS)
    }))

  it.effect("a write that fails after changing the world leaves nothing behind", () =>
    Effect.gen(function*() {
      const { a, changeLog } = setup()
      const seeded = yield* a.read
      const failed = yield* Effect.flip(a.write(1, Effect.die("boom")).pipe(Effect.catchAllDefect(Effect.fail)))
      assert.strictEqual(failed, "boom")
      assert.strictEqual(Option.getOrThrow(yield* changeLog.read(ID, 0)).version, 0)
      assert.strictEqual(yield* a.read, seeded)
    }))

  it.effect("a reset in one process regenerates the world in the other", () =>
    Effect.gen(function*() {
      const { a, b } = setup()
      const seeded = yield* a.read
      yield* a.write(1)
      yield* a.write(2)
      assert.strictEqual(yield* b.read, seeded + 2)
      yield* Effect.flatMap(a.reference, a.replicas.reset)
      yield* a.write(3)
      // b held version 2; the stored version is 4, with one change after the reset: a gap
      assert.strictEqual(yield* b.read, seeded + 1)
      assert.strictEqual(yield* a.read, seeded + 1)
    }))

  it.effect("a fault set in one process is served in the other, and cleared by a reset", () =>
    Effect.gen(function*() {
      const { a, b } = setup()
      yield* b.read
      yield* Effect.flatMap(a.reference, (r) => a.replicas.setFault(r, { kind: "outage" }))
      const served = Effect.flatMap(b.reference, (r) => b.replicas.read(r, Effect.sync(() => b.sandbox.fault(KEY))))
      assert.deepStrictEqual(yield* served, { kind: "outage" })
      yield* Effect.flatMap(a.reference, a.replicas.reset)
      assert.strictEqual(yield* served, undefined)
      yield* Effect.flatMap(a.reference, (r) => a.replicas.setFault(r, { kind: "rate_limited", retry_after: 5 }))
      assert.deepStrictEqual(yield* served, { kind: "rate_limited", retry_after: 5 })
      yield* Effect.flatMap(b.reference, (r) => b.replicas.setFault(r, null))
      assert.strictEqual(
        yield* Effect.flatMap(a.reference, (r) => a.replicas.read(r, Effect.sync(() => a.sandbox.fault(KEY)))),
        undefined
      )
    }))
})

describe("Replicas.read and the stored fault", () => {
  /** A sandbox that counts how often a world's fault is switched. */
  class Counting extends Sandbox.Sandbox {
    switched = 0
    override setFault(key: string, fault: Parameters<Sandbox.Sandbox["setFault"]>[1]): void {
      this.switched++
      super.setFault(key, fault)
    }
  }

  it.effect("switches the world's fault only when the reference names another one than the one in force", () =>
    Effect.gen(function*() {
      const sandbox = new Counting({
        providers: Registry.installed,
        seed: "42",
        referenceDate: "2026-03-15T00:00:00.000Z",
        now: () => 0
      })
      const replicas = Replicas.make({ sandbox, changeLog: ChangeLog.memory() })
      const at = (fault: Replicas.Reference["fault"]): Replicas.Reference => ({
        id: ID,
        provider: "provider_a",
        state: "CO",
        login: "user_good",
        referenceDate: "2026-03-15T00:00:00.000Z",
        version: 0,
        fault
      })
      const faultInForce = (reference: Replicas.Reference) =>
        replicas.read(reference, Effect.sync(() => sandbox.fault(KEY)))
      const none = at(null)
      for (let i = 0; i < 5; i++) assert.strictEqual(yield* faultInForce(none), undefined)
      // the first read built the replica (and set its stored fault, none); the others changed nothing
      assert.strictEqual(sandbox.switched, 1)
      // another node stored a fault: the next reference names it, and the read serves it
      const outage = at({ kind: "outage" })
      assert.deepStrictEqual(yield* faultInForce(outage), { kind: "outage" })
      assert.deepStrictEqual(yield* faultInForce(outage), { kind: "outage" })
      assert.strictEqual(sandbox.switched, 2)
      // and cleared it
      assert.strictEqual(yield* faultInForce(none), undefined)
      assert.strictEqual(sandbox.switched, 3)
      // a fault switched in this process behind the reference's back is put right by the next read
      sandbox.setFault(KEY, { kind: "malformed" })
      assert.strictEqual(yield* faultInForce(none), undefined)
    }))
})

describe("ChangeLog.memory", () => {
  it.effect("appends at the expected version only, reads after a version, and a reset leaves a gap", () =>
    Effect.gen(function*() {
      const log = ChangeLog.memory()
      const read = (after: number) => Effect.map(log.read(ID, after), Option.getOrThrow)
      assert.deepStrictEqual(yield* read(0), { version: 0, fault: null, changes: [] })
      assert.isTrue(yield* log.append(ID, 0, [hold(1), hold(2)]))
      assert.isFalse(yield* log.append(ID, 0, [hold(9)]))
      assert.isTrue(yield* log.append(ID, 2, [hold(3)]))
      assert.isTrue(yield* log.append(ID, 0, []))
      assert.deepStrictEqual((yield* read(1)).changes, [hold(2), hold(3)])
      yield* log.setFault(ID, { kind: "outage" })
      assert.deepStrictEqual((yield* read(3)).fault, { kind: "outage" })
      yield* log.reset(ID)
      assert.deepStrictEqual(yield* read(0), { version: 4, fault: null, changes: [] })
      assert.isTrue(yield* log.append(ID, 4, [hold(4)]))
      assert.deepStrictEqual(yield* read(3), { version: 5, fault: null, changes: [hold(4)] })
      assert.deepStrictEqual((yield* log.read("other", 0)).pipe(Option.map((s) => s.version)), Option.some(0))
    }))

  it.effect("copies changes in and out", () =>
    Effect.gen(function*() {
      const log = ChangeLog.memory()
      const change = hold(1)
      yield* log.append(ID, 0, [change])
      if (change._tag === "Scenario") (change.input.params as Record<string, unknown>).mutated = true
      const [stored] = Option.getOrThrow(yield* log.read(ID, 0)).changes
      assert.deepStrictEqual(stored, hold(1))
    }))
})
