/**
 * The sandbox's `ChangeLog` port on the database: each sandbox connection's stored world is its
 * row in `SandboxLog` (the connection id is the world's id). Changes are stored as JSON text, one
 * row each, stamped with Effect's `Clock`; the fault is JSON text in the connection row. A stored
 * fault that no longer decodes reads as none.
 *
 * @since 0.1.0
 */
import { Fault } from "@tracebridge/core"
import type { ChangeLog, Sandbox } from "@tracebridge/sandbox"
import { Clock, Effect, Option, Schema } from "effect"
import type * as SandboxLog from "./SandboxLog.js"

const decode = Schema.decodeUnknownOption(Schema.parseJson(Fault.Fault))

/**
 * The fault stored as JSON text in a connection row (`sandbox_fault`); none for null or for text
 * that does not decode.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeFault = (text: string | null): Option.Option<Fault.Fault> =>
  text === null ? Option.none() : decode(text)

/**
 * @since 0.1.0
 * @category constructors
 */
export const make = (sandboxLog: SandboxLog.Service): ChangeLog.ChangeLog => ({
  read: (id, after) =>
    Effect.map(sandboxLog.sandboxLog(id, after), (stored) =>
      Option.map(stored, (snapshot) => ({
        version: snapshot.version,
        fault: Option.getOrNull(decodeFault(snapshot.fault)),
        changes: snapshot.changes.map((c) => JSON.parse(c.change) as Sandbox.Change)
      }))),
  append: (id, expected, changes) =>
    Effect.flatMap(Clock.currentTimeMillis, (at) =>
      sandboxLog.appendSandboxChanges(
        id,
        expected,
        changes.map((change) => ({ change: JSON.stringify(change), created_at: at }))
      )),
  setFault: (id, fault) => sandboxLog.setSandboxFault(id, fault === null ? null : JSON.stringify(fault)),
  reset: (id) => sandboxLog.resetSandbox(id)
})
