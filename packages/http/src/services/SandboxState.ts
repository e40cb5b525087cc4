/**
 * Sandbox state shared by every API process on one database (DECISIONS "Sandbox state", "Several
 * API nodes"). The database holds the truth: each sandbox connection's change log, its version
 * (`Connection.sandbox_version`, raised by every appended change and every reset) and its upstream
 * fault. A process's in-memory world is a cache of that log, good while it holds the stored
 * version:
 *
 * - **reads** run on the world when this process holds the version the request's connection row
 *   names (read at the start of the request, so every write committed before is seen); otherwise
 *   the world is brought up to date first: the changes after the held version are applied, or,
 *   after a reset (a gap in the sequences), the world is regenerated from the seed and the whole
 *   log replayed;
 * - **writes** run alone on the connection in this process (a per-connection lock: readers share
 *   it, a writer holds it whole), on a world brought up to date from the database under the lock.
 *   What the write changed is appended with optimistic concurrency (`SandboxLog.appendSandboxChanges`:
 *   only if the stored version is still the one the world was built on). If another process got
 *   there first, the world is dropped, rebuilt from the log and the write runs again on it (a
 *   split may now be refused, as the state system would); after `MAX_ATTEMPTS` conflicts in a
 *   row the answer is 409 `write_conflict`, never a 500;
 * - a write that fails or is interrupted after changing the world, or whose commit fails, drops
 *   the world, so that nothing uncommitted is ever served; the next request rebuilds it from the
 *   log. Ids come from the world's counters, so the ids of committed writes never change on replay.
 *
 * Faults live in the connection row too: every request sets the world's fault from it before the
 * emulator answers.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import type { World } from "@tracebridge/sandbox"
import { Faults, Sandbox } from "@tracebridge/sandbox"
import { Clock, Data, Effect, Exit, Option, Schema } from "effect"
import * as Errors from "../Errors.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import type * as SandboxLog from "../persistence/SandboxLog.js"

/**
 * How many times a write runs before a conflict answers 409: each conflict means another process
 * committed a write to the same connection meanwhile.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ATTEMPTS = 8

const DAY = 86_400_000

/**
 * The instant a sandbox connection's world is generated at: the start of the (UTC) day it was
 * linked. Every process, before and after a restart, generates the same world for it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const referenceDateOf = (connection: Connection): string =>
  new Date(Math.floor(connection.created_at / DAY) * DAY).toISOString()

/** Readers take one permit; a writer, or a reader bringing the world up to date, takes them all. */
const PERMITS = 1 << 20

/**
 * Another process appended to the connection's log since this world was built.
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxConflict extends Data.TaggedError("SandboxConflict")<{}> {}

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Runs a read on the connection's world, current as of the connection row. */
  readonly read: <A, E, R>(connection: Connection, body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Runs a write on the connection's world and stores what it changed. The body may run `commit`
   * inside a transaction of its own (to store something with the changes, atomically); whatever
   * it has not committed is committed after it. A conflict runs the body again. `version` is the
   * stored version the world is at when the body runs: raised by every committed change and every
   * reset, so no two writes that commit see the same one (a scenario's event id is made from it).
   */
  readonly write: <A, E, R>(
    connection: Connection,
    body: (
      commit: Effect.Effect<void, SandboxConflict>,
      version: number
    ) => Effect.Effect<A, E | SandboxConflict, R>
  ) => Effect.Effect<A, Exclude<E, SandboxConflict> | Errors.ConflictError, R>
  /** The connection's world (run inside `write`'s body, where it is current). */
  readonly world: (connection: Connection) => World.World
  /** Stores a fault (or clears it, with null) and switches it on in this process. */
  readonly setFault: (connection: Connection, fault: Faults.Fault | null) => Effect.Effect<void>
  /** The stored fault of the connection, from its row. */
  readonly faultOf: (connection: Connection) => Faults.Fault | undefined
  /** Resets the connection: its log and fault are forgotten, on every process from its next request. */
  readonly reset: (connection: Connection) => Effect.Effect<void>
}

const decodeFault = Schema.decodeUnknownOption(Schema.parseJson(Faults.Fault))

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: {
  /** Where the connections' change logs, versions and faults are stored. */
  readonly sandboxLog: SandboxLog.Service
  readonly sandbox: Sandbox.Sandbox
  /** The login a sandbox connection's world is generated for (as its emulator keys it). */
  readonly loginOf: (connection: Connection) => string
}): Service => {
  const { loginOf, sandbox, sandboxLog } = options
  /** The stored version each world in memory was built to, by connection id. */
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
  const coordinates = (connection: Connection) => ({
    provider: connection.provider as ProviderName.ProviderName,
    state: connection.state as ProviderName.UsState,
    login: loginOf(connection)
  })
  const keyOf = (connection: Connection) => {
    const { login, provider, state } = coordinates(connection)
    return Sandbox.keyOf(provider, state, login)
  }
  const worldOf = (connection: Connection) => {
    const { login, provider, state } = coordinates(connection)
    return sandbox.world(provider, state, login, referenceDateOf(connection))
  }
  const faultOf = (text: string | null) => text === null ? Option.none() : decodeFault(text)
  const switchFault = (key: string, text: string | null) => sandbox.setFault(key, Option.getOrNull(faultOf(text)))
  const drop = (connection: Connection) => {
    held.delete(connection.id)
    sandbox.reset(keyOf(connection))
  }
  /** The version of the world in memory, if this process holds it. */
  const heldVersion = (connection: Connection) => {
    const { login, provider, state } = coordinates(connection)
    return sandbox.has(provider, state, login) ? held.get(connection.id) : undefined
  }
  const isCurrent = (connection: Connection) => {
    const version = heldVersion(connection)
    return version !== undefined && version >= connection.sandbox_version
  }

  /** Brings the world to the stored version (the caller holds the whole lock). */
  const catchUp = (connection: Connection) =>
    Effect.gen(function*() {
      const key = keyOf(connection)
      const have = heldVersion(connection)
      const stored = Option.getOrElse(
        yield* sandboxLog.sandboxLog(connection.id, have ?? 0),
        () => ({ version: 0, fault: null, changes: [] })
      )
      const parse = (changes: typeof stored.changes) => changes.map((c) => JSON.parse(c.change) as Sandbox.Change)
      let version = stored.version
      let fault = stored.fault
      if (have !== undefined && stored.version === have) {
        // current
      } else if (have !== undefined && stored.version > have && stored.changes.length === stored.version - have) {
        // the changes since, with no reset between (a reset leaves a gap in the sequences)
        sandbox.restore(worldOf(connection), parse(stored.changes))
      } else {
        const whole = have === undefined
          ? stored
          : Option.getOrElse(yield* sandboxLog.sandboxLog(connection.id, 0), () => stored)
        sandbox.reset(key)
        const world = worldOf(connection)
        if (whole.changes.length > 0) sandbox.restore(world, parse(whole.changes))
        version = whole.version
        fault = whole.fault
      }
      held.set(connection.id, version)
      switchFault(key, fault)
      return { key, version }
    })

  const attempt = <A, E, R>(
    connection: Connection,
    body: (commit: Effect.Effect<void, SandboxConflict>, version: number) => Effect.Effect<A, E | SandboxConflict, R>
  ) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const { key, version } = yield* restore(catchUp(connection))
        const from = sandbox.log(key).length
        let committed = 0
        const commit: Effect.Effect<void, SandboxConflict> = Effect.suspend(() => {
          const fresh = sandbox.log(key).slice(from + committed)
          if (fresh.length === 0) return Effect.void
          return Effect.flatMap(Clock.currentTimeMillis, (at) =>
            Effect.flatMap(
              sandboxLog.appendSandboxChanges(
                connection.id,
                version + committed,
                fresh.map((change) => ({ change: JSON.stringify(change), created_at: at }))
              ),
              (appended) =>
                appended
                  ? Effect.sync(() => {
                    committed += fresh.length
                  })
                  : Effect.fail(new SandboxConflict())
            ))
        })
        const exit = yield* Effect.exit(restore(Effect.zipLeft(body(commit, version), commit)))
        if (Exit.isSuccess(exit) && sandbox.log(key).length === from + committed) {
          held.set(connection.id, version + committed)
        } else if (sandbox.log(key).length !== from || Exit.isFailure(exit)) {
          // It may hold what the database does not: rebuilt from the log on the next request.
          drop(connection)
        }
        return yield* exit
      })
    )

  const sandboxed = (connection: Connection) => connection.is_sandbox && connection.credentials !== null

  return {
    read: (connection, body) => {
      if (!sandboxed(connection)) return body
      const lock = lockOf(connection.id)
      return Effect.flatMap(
        lock.withPermits(1)(Effect.suspend(() => {
          if (!isCurrent(connection)) return Effect.succeed(Option.none())
          switchFault(keyOf(connection), connection.sandbox_fault)
          return Effect.map(body, Option.some)
        })),
        (served) =>
          Option.isSome(served)
            ? Effect.succeed(served.value)
            : lock.withPermits(PERMITS)(Effect.zipRight(catchUp(connection), body))
      )
    },
    write: <A, E, R>(
      connection: Connection,
      body: (commit: Effect.Effect<void, SandboxConflict>, version: number) => Effect.Effect<A, E | SandboxConflict, R>
    ): Effect.Effect<A, Exclude<E, SandboxConflict> | Errors.ConflictError, R> => {
      const run = (n: number): Effect.Effect<A, Exclude<E, SandboxConflict> | Errors.ConflictError, R> =>
        Effect.catchIf(
          attempt(connection, body),
          (e): e is SandboxConflict => e instanceof SandboxConflict,
          () =>
            n + 1 < MAX_ATTEMPTS
              ? run(n + 1)
              : Errors.fail(
                "conflict_error",
                "write_conflict",
                "Other writes to this connection kept landing first; send the request again"
              )
        ) as Effect.Effect<A, Exclude<E, SandboxConflict> | Errors.ConflictError, R>
      if (!sandboxed(connection)) {
        return Effect.catchIf(
          body(Effect.void, connection.sandbox_version),
          (e): e is SandboxConflict => e instanceof SandboxConflict,
          () => Errors.fail("conflict_error", "write_conflict", "A conflicting write landed first")
        ) as Effect.Effect<A, Exclude<E, SandboxConflict> | Errors.ConflictError, R>
      }
      return lockOf(connection.id).withPermits(PERMITS)(run(0))
    },
    world: worldOf,
    setFault: (connection, fault) =>
      Effect.zipRight(
        sandboxLog.setSandboxFault(connection.id, fault === null ? null : JSON.stringify(fault)),
        Effect.sync(() => sandbox.setFault(keyOf(connection), fault))
      ),
    faultOf: (connection) => Option.getOrUndefined(faultOf(connection.sandbox_fault)),
    reset: (connection) =>
      lockOf(connection.id).withPermits(PERMITS)(
        // the stored state first: if that fails, nothing in memory has changed
        Effect.zipRight(
          sandboxLog.resetSandbox(connection.id),
          Effect.sync(() => {
            if (!sandboxed(connection)) return
            drop(connection)
            sandbox.setFault(keyOf(connection), null)
          })
        )
      )
  }
}
