/**
 * The sandbox's `ChangeLog` port on the database (`persistence/SandboxChangeLog.ts` over
 * `SandboxLog`, SQLite): a change and a fault go in as the sandbox's values and come out equal,
 * stored as the JSON text rows every process (and every earlier release) reads; a fault that no
 * longer decodes reads as none. Then two processes on one database, through `SandboxState`: a
 * write, a fault and a reset made in one are served in the other. The consistency model itself is
 * tested in the sandbox (`Replicas.test.ts`); the same across two API processes on Postgres is
 * `MultiNode.pg.test.ts`.
 */
import { assert, layer } from "@effect/vitest"
import type { Fault } from "@tracebridge/core"
import { Registry, Sandbox } from "@tracebridge/sandbox"
import { Effect, Either, Option, TestClock } from "effect"
import { Accounts } from "../src/persistence/Accounts.js"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as SandboxChangeLog from "../src/persistence/SandboxChangeLog.js"
import { SandboxLog } from "../src/persistence/SandboxLog.js"
import * as SandboxState from "../src/services/SandboxState.js"
import * as TestDatabase from "./support/TestDatabase.js"

const T0 = Date.parse("2026-03-15T09:30:00.000Z")

const connection = (id: string): Connection => ({
  id,
  organisation_id: `org_${id}`,
  provider: "provider_a",
  state: "CO",
  status: "active",
  is_sandbox: true,
  external_id: null,
  credentials: "sealed",
  key_id: "k1",
  token_issued: true,
  created_at: T0,
  updated_at: T0,
  sandbox_version: 0,
  sandbox_fault: null
})

const stored = (id: string) =>
  Effect.gen(function*() {
    const connections = yield* ConnectionStore
    yield* (yield* Accounts).insertOrganisation({ id: `org_${id}`, name: "Org", plan: "sandbox", created_at: T0 })
    yield* connections.insertConnection(connection(id))
    return Effect.map(connections.getConnection(id), Option.getOrThrow)
  })

const changes: ReadonlyArray<Sandbox.Change> = [
  {
    _tag: "SplitPackage",
    input: {
      license: "403-X0001",
      itemName: "Blue Dream – Flower",
      quantity: 1.5,
      unit: "Grams",
      ingredients: [{ tag: "1A4000000000000000000001", quantity: 1.5, unit: "Grams" }],
      at: T0,
      testingSample: true
    }
  },
  {
    _tag: "Scenario",
    input: {
      name: "package_hold",
      params: { package_id: "pkg_1", nested: { list: [1, "two", null] } },
      at: T0 + 1
    }
  },
  { _tag: "RenewLogin" }
]

layer(TestDatabase.layer)("SandboxChangeLog", (it) => {
  it.effect("stores changes and faults as JSON text and reads them back equal", () =>
    Effect.gen(function*() {
      yield* stored("conn_roundtrip")
      const sandboxLog = yield* SandboxLog
      const log = SandboxChangeLog.make(sandboxLog)
      yield* TestClock.setTime(T0 + 5)
      assert.isTrue(yield* log.append("conn_roundtrip", 0, changes))
      assert.isFalse(yield* log.append("conn_roundtrip", 0, changes), "a stale version appends nothing")
      const read = Option.getOrThrow(yield* log.read("conn_roundtrip", 0))
      assert.deepStrictEqual(read, { version: 3, fault: null, changes })
      assert.deepStrictEqual(Option.getOrThrow(yield* log.read("conn_roundtrip", 2)).changes, changes.slice(2))
      // the rows are the JSON text of each change, stamped with Effect's clock
      const rows = Option.getOrThrow(yield* sandboxLog.sandboxLog("conn_roundtrip", 0)).changes
      assert.deepStrictEqual(
        rows.map((r) => [r.seq, r.change, r.created_at]),
        changes.map((c, i) => [i + 1, JSON.stringify(c), T0 + 5])
      )

      const fault: Fault.Fault = { kind: "slow", delay_ms: 1_500 }
      yield* log.setFault("conn_roundtrip", fault)
      assert.deepStrictEqual(Option.getOrThrow(yield* log.read("conn_roundtrip", 3)).fault, fault)
      assert.strictEqual(
        Option.getOrThrow(yield* sandboxLog.sandboxLog("conn_roundtrip", 3)).fault,
        JSON.stringify(fault)
      )
      yield* log.setFault("conn_roundtrip", null)
      assert.strictEqual(Option.getOrThrow(yield* log.read("conn_roundtrip", 3)).fault, null)
      yield* sandboxLog.setSandboxFault("conn_roundtrip", JSON.stringify({ kind: "flood" }))
      assert.strictEqual(Option.getOrThrow(yield* log.read("conn_roundtrip", 3)).fault, null, "undecodable: none")

      yield* log.reset("conn_roundtrip")
      assert.deepStrictEqual(Option.getOrThrow(yield* log.read("conn_roundtrip", 0)), {
        version: 4,
        fault: null,
        changes: []
      })
      assert.deepStrictEqual(yield* log.read("conn_unknown", 0), Option.none())
    }))

  it.effect("two processes on one database: a write, a fault and a reset in one are served in the other", () =>
    Effect.gen(function*() {
      const row = yield* stored("conn_nodes")
      const sandboxLog = yield* SandboxLog
      const node = () => {
        const sandbox = new Sandbox.Sandbox({
          providers: Registry.installed,
          seed: "42",
          referenceDate: "2026-01-01T00:00:00.000Z",
          now: () => T0
        })
        const state = SandboxState.make({ sandboxLog, sandbox, loginOf: () => "user_good~conn_nodes" })
        const key = Sandbox.keyOf("provider_a", "CO", "user_good~conn_nodes")
        const onHold = () =>
          sandbox.world("provider_a", "CO", "user_good~conn_nodes").facilities.flatMap((f) => f.packages)
            .filter((p) => p.is_on_hold).length
        return {
          sandbox,
          state,
          read: Effect.flatMap(
            row,
            (c) => state.read(c, Effect.sync(() => ({ onHold: onHold(), fault: sandbox.fault(key) })))
          ),
          hold: Effect.flatMap(row, (c) =>
            state.write(c, (commit) =>
              Effect.zipRight(
                Effect.sync(() => {
                  const applied = sandbox.apply(state.world(c), {
                    _tag: "Scenario",
                    input: { name: "package_hold", params: {}, at: T0 }
                  })
                  assert.isTrue(Either.isRight(applied))
                }),
                commit
              )))
        }
      }
      const a = node()
      const b = node()
      const seeded = (yield* a.read).onHold
      yield* a.hold
      assert.deepStrictEqual(yield* b.read, { onHold: seeded + 1, fault: undefined })
      yield* b.hold
      assert.deepStrictEqual(yield* a.read, { onHold: seeded + 2, fault: undefined })
      yield* Effect.flatMap(row, (c) => a.state.setFault(c, { kind: "outage" }))
      assert.deepStrictEqual(yield* b.read, { onHold: seeded + 2, fault: { kind: "outage" } })
      assert.deepStrictEqual(a.state.faultOf(yield* row), { kind: "outage" })
      yield* Effect.flatMap(row, a.state.reset)
      assert.deepStrictEqual(yield* b.read, { onHold: seeded, fault: undefined })
      assert.strictEqual((yield* row).sandbox_version, 3)
    }))
})
