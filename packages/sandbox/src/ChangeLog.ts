/**
 * The port through which a host stores its sandbox worlds (`Replicas`). A world is never stored:
 * it is generated from the seed. What is stored, per world, is what changed it since, so that
 * every process that shares the store replays the same world:
 *
 * - a version, raised by every appended change and by every reset;
 * - the world's upstream fault, if one is switched on;
 * - the change log: each change with the version it made (1, 2, … after each reset's).
 *
 * Changes are appended with optimistic concurrency: only if the stored version is still the one
 * the writer's world was built on. A reset forgets the log and the fault and raises the version,
 * so a process that held the world sees a gap and regenerates it.
 *
 * The port speaks in the sandbox's terms (`Sandbox.Change`, core's `Fault`); how a host encodes
 * them is its own business. `memory` keeps them in this process (tests, the standalone sandbox);
 * the API keeps them in its database (http's `persistence/SandboxChangeLog.ts`).
 *
 * @since 0.1.0
 */
import type { Fault } from "@tracebridge/core"
import { Effect, Option } from "effect"
import type { Change } from "./Sandbox.js"

/**
 * A stored world as one read found it (one snapshot: the version, the fault and the changes
 * agree).
 *
 * @since 0.1.0
 * @category models
 */
export interface Snapshot {
  readonly version: number
  /** The world's upstream fault, or null. */
  readonly fault: Fault.Fault | null
  /** The changes after the version asked for, up to `version`, in order. */
  readonly changes: ReadonlyArray<Change>
}

/**
 * Where a host stores its sandbox worlds, by an id of its own (the API's connection id). Every
 * method is atomic on its own.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChangeLog {
  /** The world's version, fault and changes after `after`; none for an id the host does not know. */
  readonly read: (id: string, after: number) => Effect.Effect<Option.Option<Snapshot>>
  /**
   * Appends changes if the stored version is still `expected`: the version becomes
   * `expected + changes.length`, atomically. False, with nothing stored, when another writer got
   * there first.
   */
  readonly append: (id: string, expected: number, changes: ReadonlyArray<Change>) => Effect.Effect<boolean>
  /** Stores the world's upstream fault, or clears it with null. */
  readonly setFault: (id: string, fault: Fault.Fault | null) => Effect.Effect<void>
  /** Forgets the world's log and fault and raises its version: every process regenerates it. */
  readonly reset: (id: string) => Effect.Effect<void>
}

/** One world's stored state in `memory`. */
interface Entry {
  version: number
  fault: Fault.Fault | null
  /** The log since the last reset; the change at index i made version `version - length + 1 + i`. */
  changes: Array<Change>
}

/**
 * A change log in this process's memory. Every id is known: an id never used is a world at
 * version 0, with no fault and no change. Changes are copied in and out, as a store would, so a
 * caller never shares one with another. Two `Sandbox` stores given the same `memory()` behave as
 * two processes on one database.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory = (): ChangeLog => {
  const entries = new Map<string, Entry>()
  const entryOf = (id: string): Entry => {
    let entry = entries.get(id)
    if (entry === undefined) {
      entry = { version: 0, fault: null, changes: [] }
      entries.set(id, entry)
    }
    return entry
  }
  return {
    read: (id, after) =>
      Effect.sync(() => {
        const entry = entryOf(id)
        const first = entry.version - entry.changes.length + 1
        return Option.some({
          version: entry.version,
          fault: entry.fault === null ? null : structuredClone(entry.fault),
          changes: structuredClone(entry.changes.slice(Math.max(0, after + 1 - first)))
        })
      }),
    append: (id, expected, changes) =>
      Effect.sync(() => {
        const entry = entryOf(id)
        if (changes.length === 0) return true
        if (entry.version !== expected) return false
        entry.changes.push(...structuredClone(changes))
        entry.version += changes.length
        return true
      }),
    setFault: (id, fault) =>
      Effect.sync(() => {
        entryOf(id).fault = fault === null ? null : structuredClone(fault)
      }),
    reset: (id) =>
      Effect.sync(() => {
        const entry = entryOf(id)
        entry.version++
        entry.fault = null
        entry.changes = []
      })
  }
}
