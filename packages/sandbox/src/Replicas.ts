/**
 * Sandbox worlds shared by every process on one store (DECISIONS "Sandbox state", "Several API
 * nodes"). A replica is one process's copy of a stored world, in its `Sandbox`: the world
 * generated from the seed with the stored log replayed on it. The store behind the `ChangeLog`
 * port holds the truth: each world's change log, its version (raised by every appended change and
 * every reset) and its upstream fault. A replica is good while it holds the stored version:
 *
 * - **reads** run on the replica when this process holds the version the caller's `Reference`
 *   names (read by the host at the start of the request, so every write committed before is seen);
 *   otherwise the replica is brought up to date first: the changes after the held version are
 *   applied, or, after a reset (a gap in the sequences), the world is regenerated from the seed and
 *   the whole log replayed;
 * - **writes** run alone on the world in this process (a lock per world: readers share it, a
 *   writer holds it whole), on a replica brought up to date under the lock. What the write changed
 *   is appended with optimistic concurrency (`ChangeLog.append`: only if the stored version is
 *   still the one the replica was built on). If another process got there first, the replica is
 *   dropped, rebuilt from the log and the write runs again on it (a split may now be refused, as
 *   the state system would); after `MAX_ATTEMPTS` conflicts in a row the write fails with
 *   `WriteConflict`;
 * - a write that fails or is interrupted after changing the world, or whose commit fails, drops
 *   the replica, so that nothing uncommitted is ever served; the next request rebuilds it from the
 *   log. Ids come from the world's counters, so the ids of committed writes never change on replay.
 *
 * Faults are stored too: every request puts the fault its `Reference` names in force before the
 * emulator answers (switching it only when another one is in force).
 *
 * @since 0.1.0
 */
import type { Fault, ProviderName } from "@tracebridge/core"
import { Data, Effect, Exit, Option } from "effect"
import type { ChangeLog } from "./ChangeLog.js"
import type { Change, Sandbox } from "./Sandbox.js"
import { keyOf } from "./Sandbox.js"
import type { World } from "./World.js"

/**
 * How many times a write runs before it fails with `WriteConflict`: each conflict means another
 * process committed a write to the same world meanwhile.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ATTEMPTS = 8

/** Readers take one permit; a writer, or a reader bringing the replica up to date, takes them all. */
const PERMITS = 1 << 20

/**
 * A stored world, as the host's record of it read at the start of the request.
 *
 * @since 0.1.0
 * @category models
 */
export interface Reference {
  /** The host's id of the stored world (the API's connection id): its key in the `ChangeLog`. */
  readonly id: string
  readonly provider: ProviderName.ProviderName
  readonly state: ProviderName.UsState
  /** The login the world is generated for (as its emulator keys it). */
  readonly login: string
  /** ISO 8601: the instant the world is generated at, the same in every process and after restarts. */
  readonly referenceDate: string
  /** The stored version the record names. */
  readonly version: number
  /** The stored fault the record names, or null. */
  readonly fault: Fault.Fault | null
}

/**
 * Another process appended to the world's log since this replica was built (a write's `commit`
 * lost the race; the write runs again).
 *
 * @since 0.1.0
 * @category errors
 */
export class StaleReplica extends Data.TaggedError("StaleReplica")<{}> {}

/**
 * A write lost the race `MAX_ATTEMPTS` times in a row: other writes to the world kept landing
 * first. Nothing of it was stored or is served.
 *
 * @since 0.1.0
 * @category errors
 */
export class WriteConflict extends Data.TaggedError("WriteConflict")<{ readonly attempts: number }> {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Replicas {
  /** Runs a read on the world, current as of the reference. */
  readonly read: <A, E, R>(reference: Reference, body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Runs a write on the world and stores what it changed. The body may run `commit` inside a
   * transaction of its own (to store something with the changes, atomically); whatever it has not
   * committed is committed after it. A conflict runs the body again. `version` is the stored
   * version the world is at when the body runs: raised by every committed change and every reset,
   * so no two writes that commit see the same one (a scenario's event id is made from it).
   */
  readonly write: <A, E, R>(
    reference: Reference,
    body: (
      commit: Effect.Effect<void, StaleReplica>,
      version: number
    ) => Effect.Effect<A, E | StaleReplica, R>
  ) => Effect.Effect<A, Exclude<E, StaleReplica> | WriteConflict, R>
  /** The world (run inside `write`'s body, where it is current). */
  readonly world: (reference: Reference) => World
  /** Stores a fault (or clears it, with null) and switches it on in this process. */
  readonly setFault: (reference: Reference, fault: Fault.Fault | null) => Effect.Effect<void>
  /** Resets the world: its log and fault are forgotten, on every process from its next request. */
  readonly reset: (reference: Reference) => Effect.Effect<void>
}

/**
 * Replicas of the worlds stored in `changeLog`, kept in `sandbox`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  readonly sandbox: Sandbox
  /** Where the worlds' change logs, versions and faults are stored. */
  readonly changeLog: ChangeLog
}): Replicas => {
  const { changeLog, sandbox } = options
  /** The stored version each replica in memory was built to, by reference id. */
  const held = new Map<string, number>()
  const locks = new Map<string, Effect.Semaphore>()
  const lockOf = (id: string) => {
    let lock = locks.get(id)
    if (lock === undefined) {
      lock = Effect.unsafeMakeSemaphore(PERMITS)
      locks.set(id, lock)
    }
    return lock
  }
  const keyOfReference = (reference: Reference) => keyOf(reference.provider, reference.state, reference.login)
  const worldOf = (reference: Reference) =>
    sandbox.world(reference.provider, reference.state, reference.login, reference.referenceDate)
  const drop = (reference: Reference) => {
    held.delete(reference.id)
    sandbox.reset(keyOfReference(reference))
  }
  /** The version of the replica in memory, if this process holds it. */
  const heldVersion = (reference: Reference) =>
    sandbox.has(reference.provider, reference.state, reference.login) ? held.get(reference.id) : undefined
  const isCurrent = (reference: Reference) => {
    const version = heldVersion(reference)
    return version !== undefined && version >= reference.version
  }

  /** Brings the replica to the stored version (the caller holds the whole lock). */
  const catchUp = (reference: Reference) =>
    Effect.gen(function*() {
      const key = keyOfReference(reference)
      const have = heldVersion(reference)
      const stored = Option.getOrElse(
        yield* changeLog.read(reference.id, have ?? 0),
        () => ({ version: 0, fault: null, changes: [] })
      )
      let version = stored.version
      let fault = stored.fault
      if (have !== undefined && stored.version === have) {
        // current
      } else if (have !== undefined && stored.version > have && stored.changes.length === stored.version - have) {
        // the changes since, with no reset between (a reset leaves a gap in the sequences)
        sandbox.restore(worldOf(reference), stored.changes)
      } else {
        const whole = have === undefined
          ? stored
          : Option.getOrElse(yield* changeLog.read(reference.id, 0), () => stored)
        sandbox.reset(key)
        const world = worldOf(reference)
        if (whole.changes.length > 0) sandbox.restore(world, whole.changes)
        version = whole.version
        fault = whole.fault
      }
      held.set(reference.id, version)
      sandbox.setFault(key, fault)
      return { key, version }
    })

  const attempt = <A, E, R>(
    reference: Reference,
    body: (commit: Effect.Effect<void, StaleReplica>, version: number) => Effect.Effect<A, E | StaleReplica, R>
  ) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const { key, version } = yield* restore(catchUp(reference))
        const from = sandbox.log(key).length
        let committed = 0
        const commit: Effect.Effect<void, StaleReplica> = Effect.suspend(() => {
          const fresh: ReadonlyArray<Change> = sandbox.log(key).slice(from + committed)
          if (fresh.length === 0) return Effect.void
          return Effect.flatMap(
            changeLog.append(reference.id, version + committed, fresh),
            (appended) =>
              appended
                ? Effect.sync(() => {
                  committed += fresh.length
                })
                : Effect.fail(new StaleReplica())
          )
        })
        const exit = yield* Effect.exit(restore(Effect.zipLeft(body(commit, version), commit)))
        if (Exit.isSuccess(exit) && sandbox.log(key).length === from + committed) {
          held.set(reference.id, version + committed)
        } else if (sandbox.log(key).length !== from || Exit.isFailure(exit)) {
          // It may hold what the store does not: rebuilt from the log on the next request.
          drop(reference)
        }
        return yield* exit
      })
    )

  return {
    read: (reference, body) => {
      const lock = lockOf(reference.id)
      return Effect.flatMap(
        lock.withPermits(1)(Effect.suspend(() => {
          if (!isCurrent(reference)) return Effect.succeed(Option.none())
          // the reference's fault is put in force when another one is (a host that keeps its
          // references hands the same fault object while the stored one is unchanged)
          const key = keyOfReference(reference)
          if ((sandbox.fault(key) ?? null) !== reference.fault) sandbox.setFault(key, reference.fault)
          return Effect.map(body, Option.some)
        })),
        (served) =>
          Option.isSome(served)
            ? Effect.succeed(served.value)
            : lock.withPermits(PERMITS)(Effect.zipRight(catchUp(reference), body))
      )
    },
    write: <A, E, R>(
      reference: Reference,
      body: (commit: Effect.Effect<void, StaleReplica>, version: number) => Effect.Effect<A, E | StaleReplica, R>
    ): Effect.Effect<A, Exclude<E, StaleReplica> | WriteConflict, R> => {
      const run = (n: number): Effect.Effect<A, Exclude<E, StaleReplica> | WriteConflict, R> =>
        Effect.catchIf(
          attempt(reference, body),
          (e): e is StaleReplica => e instanceof StaleReplica,
          () => n + 1 < MAX_ATTEMPTS ? run(n + 1) : Effect.fail(new WriteConflict({ attempts: n + 1 }))
        ) as Effect.Effect<A, Exclude<E, StaleReplica> | WriteConflict, R>
      return lockOf(reference.id).withPermits(PERMITS)(run(0))
    },
    world: worldOf,
    setFault: (reference, fault) =>
      Effect.zipRight(
        changeLog.setFault(reference.id, fault),
        Effect.sync(() => sandbox.setFault(keyOfReference(reference), fault))
      ),
    reset: (reference) =>
      lockOf(reference.id).withPermits(PERMITS)(
        // the stored state first: if that fails, nothing in memory has changed
        Effect.zipRight(changeLog.reset(reference.id), Effect.sync(() => drop(reference)))
      )
  }
}
