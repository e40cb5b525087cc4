/**
 * Sandbox state shared by every API process on one database (DECISIONS "Sandbox state", "Several
 * API nodes"; ADR 0012, ADR 0024). The consistency model is the sandbox's (`Replicas`: each
 * process's world is a replica of the stored change log, brought up to date on every request,
 * writes appended with optimistic concurrency); its store is the database
 * (`persistence/SandboxChangeLog.ts`). This module only adapts a connection row to it:
 *
 * - a sandbox connection's world is the one its login opens, generated at the start of the (UTC)
 *   day it was linked, at the version and with the fault its row names (the reference to it is
 *   kept per connection while the row names the same login, version and fault);
 * - a production connection, or one without a login, passes straight through (no world, no lock);
 * - a write that kept losing the race (`Replicas.WriteConflict`) is 409 `write_conflict`.
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"
import type { Faults, Sandbox, World } from "@tracebridge/sandbox"
import { Replicas } from "@tracebridge/sandbox"
import { Effect, Option } from "effect"
import * as Errors from "../Errors.js"
import { Lru } from "../Lru.js"
import type { Connection } from "../persistence/ConnectionStore.js"
import * as SandboxChangeLog from "../persistence/SandboxChangeLog.js"
import type * as SandboxLog from "../persistence/SandboxLog.js"

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

/**
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Runs a read on the connection's world, current as of the connection row. */
  readonly read: <A, E, R>(connection: Connection, body: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Runs a write on the connection's world and stores what it changed (`Replicas.write`: `commit`
   * may run inside a transaction of the body's; a conflict runs the body again; `version` is never
   * seen twice by writes that commit). After `Replicas.MAX_ATTEMPTS` conflicts: 409 `write_conflict`.
   */
  readonly write: <A, E, R>(
    connection: Connection,
    body: (
      commit: Effect.Effect<void, Replicas.StaleReplica>,
      version: number
    ) => Effect.Effect<A, E | Replicas.StaleReplica, R>
  ) => Effect.Effect<A, Exclude<E, Replicas.StaleReplica> | Errors.ConflictError, R>
  /** The connection's world (run inside `write`'s body, where it is current). */
  readonly world: (connection: Connection) => World.World
  /** Stores a fault (or clears it, with null) and switches it on in this process. */
  readonly setFault: (connection: Connection, fault: Faults.Fault | null) => Effect.Effect<void>
  /** The stored fault of the connection, from its row. */
  readonly faultOf: (connection: Connection) => Faults.Fault | undefined
  /** Resets the connection: its log and fault are forgotten, on every process from its next request. */
  readonly reset: (connection: Connection) => Effect.Effect<void>
}

const isStale = (e: unknown): e is Replicas.StaleReplica => e instanceof Replicas.StaleReplica
const isWriteConflict = (e: unknown): e is Replicas.WriteConflict => e instanceof Replicas.WriteConflict

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
  const changeLog = SandboxChangeLog.make(sandboxLog)
  const replicas = Replicas.make({ sandbox, changeLog })
  // Each connection's reference, kept while its row names the same login, version and fault: the
  // login's world and the reference date are derived once per login, the stored fault decoded once
  // per text. Checked against the row the request read (DECISIONS "Several API nodes": another
  // node's relink, fault, write or reset changes the row, and the next request's reference).
  const references = new Lru<{
    readonly credentials: string | null
    readonly provider: string
    readonly state: string
    readonly created_at: number
    readonly fault: string | null
    readonly reference: Replicas.Reference
  }>(10_000)
  const referenceOf = (connection: Connection): Replicas.Reference => {
    const kept = references.get(connection.id)
    if (
      kept !== undefined && kept.credentials === connection.credentials && kept.provider === connection.provider &&
      kept.state === connection.state && kept.created_at === connection.created_at
    ) {
      if (kept.reference.version === connection.sandbox_version && kept.fault === connection.sandbox_fault) {
        return kept.reference
      }
      const reference: Replicas.Reference = {
        ...kept.reference,
        version: connection.sandbox_version,
        fault: kept.fault === connection.sandbox_fault
          ? kept.reference.fault
          : Option.getOrNull(SandboxChangeLog.decodeFault(connection.sandbox_fault))
      }
      references.set(connection.id, { ...kept, fault: connection.sandbox_fault, reference })
      return reference
    }
    const reference: Replicas.Reference = {
      id: connection.id,
      provider: connection.provider as ProviderName.ProviderName,
      state: connection.state as ProviderName.UsState,
      login: loginOf(connection),
      referenceDate: referenceDateOf(connection),
      version: connection.sandbox_version,
      fault: Option.getOrNull(SandboxChangeLog.decodeFault(connection.sandbox_fault))
    }
    references.set(connection.id, {
      credentials: connection.credentials,
      provider: connection.provider,
      state: connection.state,
      created_at: connection.created_at,
      fault: connection.sandbox_fault,
      reference
    })
    return reference
  }
  const sandboxed = (connection: Connection) => connection.is_sandbox && connection.credentials !== null

  return {
    read: (connection, body) => sandboxed(connection) ? replicas.read(referenceOf(connection), body) : body,
    write: <A, E, R>(
      connection: Connection,
      body: (
        commit: Effect.Effect<void, Replicas.StaleReplica>,
        version: number
      ) => Effect.Effect<A, E | Replicas.StaleReplica, R>
    ): Effect.Effect<A, Exclude<E, Replicas.StaleReplica> | Errors.ConflictError, R> => {
      if (!sandboxed(connection)) {
        return Effect.catchIf(
          body(Effect.void, connection.sandbox_version),
          isStale,
          () => Errors.fail("conflict_error", "write_conflict", "A conflicting write landed first")
        ) as Effect.Effect<A, Exclude<E, Replicas.StaleReplica> | Errors.ConflictError, R>
      }
      return Effect.catchIf(
        replicas.write(referenceOf(connection), body),
        isWriteConflict,
        () =>
          Errors.fail(
            "conflict_error",
            "write_conflict",
            "Other writes to this connection kept landing first; send the request again"
          )
      ) as Effect.Effect<A, Exclude<E, Replicas.StaleReplica> | Errors.ConflictError, R>
    },
    world: (connection) => replicas.world(referenceOf(connection)),
    setFault: (connection, fault) =>
      sandboxed(connection)
        ? replicas.setFault(referenceOf(connection), fault)
        : changeLog.setFault(connection.id, fault),
    faultOf: (connection) => Option.getOrUndefined(SandboxChangeLog.decodeFault(connection.sandbox_fault)),
    reset: (connection) =>
      sandboxed(connection) ? replicas.reset(referenceOf(connection)) : changeLog.reset(connection.id)
  }
}
