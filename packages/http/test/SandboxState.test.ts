/**
 * `SandboxState`, the adapter from a connection row to the sandbox's `Replicas`: a sandbox
 * connection's world is its login's, generated at the start of the day it was linked; a write that
 * keeps losing the race is 409 `write_conflict`; a production connection passes straight through.
 * The consistency model itself is tested in the sandbox (`Replicas.test.ts`), the database's
 * change log in `SandboxChangeLog.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Registry, Replicas, Sandbox } from "@tracebridge/sandbox"
import { Effect, Either, Option } from "effect"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import type * as SandboxLog from "../src/persistence/SandboxLog.js"
import * as SandboxState from "../src/services/SandboxState.js"

const connection = (version: number, overrides: Partial<Connection> = {}): Connection => ({
  id: "conn_state",
  organisation_id: "org_1",
  provider: "provider_a",
  state: "CO",
  status: "active",
  is_sandbox: true,
  external_id: null,
  credentials: "sealed",
  key_id: "k1",
  token_issued: true,
  created_at: Date.parse("2026-03-15T17:45:00.000Z"),
  updated_at: 0,
  sandbox_version: version,
  sandbox_fault: null,
  ...overrides
})

const hold = (at: number): Sandbox.Change => ({
  _tag: "Scenario",
  input: { name: "package_hold", params: {}, at }
})

/** A stored log in memory whose appends always lose the race, counting them. */
const refusingLog = () => {
  const store = {
    appends: 0,
    service: {
      sandboxLog: () => Effect.succeed(Option.some({ version: 0, fault: null, changes: [] })),
      appendSandboxChanges: () =>
        Effect.sync(() => {
          store.appends++
          return false
        }),
      setSandboxFault: () => Effect.void,
      resetSandbox: () => Effect.void
    } satisfies SandboxLog.Service
  }
  return store
}

const setup = () => {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: "1970-01-01T00:00:00.000Z",
    now: () => 0
  })
  const log = refusingLog()
  const state = SandboxState.make({ sandboxLog: log.service, sandbox, loginOf: () => "user_good" })
  const onHold = () =>
    sandbox.world("provider_a", "CO", "user_good").facilities.flatMap((f) => f.packages).filter((p) => p.is_on_hold)
      .length
  return { sandbox, log, state, onHold }
}

describe("SandboxState", () => {
  it.effect("a connection's world is its login's, generated at the start of the day it was linked", () =>
    Effect.gen(function*() {
      const { sandbox, state } = setup()
      assert.strictEqual(SandboxState.referenceDateOf(connection(0)), "2026-03-15T00:00:00.000Z")
      yield* state.read(connection(0), Effect.void)
      assert.isTrue(sandbox.has("provider_a", "CO", "user_good"))
      assert.strictEqual(state.world(connection(0)), sandbox.world("provider_a", "CO", "user_good"))
      assert.strictEqual(state.world(connection(0)).referenceDate, "2026-03-15T00:00:00.000Z")
    }))

  it.effect("after MAX_ATTEMPTS conflicts: 409 write_conflict, and nothing uncommitted is served", () =>
    Effect.gen(function*() {
      const { log, onHold, sandbox, state } = setup()
      yield* state.read(connection(0), Effect.void)
      const seeded = onHold()
      const failed = yield* Effect.flip(
        state.write(connection(0), (commit) =>
          Effect.zipRight(
            Effect.sync(() => assert.isTrue(Either.isRight(sandbox.apply(state.world(connection(0)), hold(1))))),
            commit
          ))
      )
      assert.strictEqual(failed._tag, "ConflictError")
      assert.strictEqual(failed.error.code, "write_conflict")
      assert.strictEqual(log.appends, Replicas.MAX_ATTEMPTS)
      yield* state.read(connection(0), Effect.void)
      assert.strictEqual(onHold(), seeded)
    }))

  it.effect("a connection's world reference is made once per login, and follows its row's version and fault", () =>
    Effect.gen(function*() {
      const sandbox = new Sandbox.Sandbox({
        providers: Registry.installed,
        seed: "42",
        referenceDate: "1970-01-01T00:00:00.000Z",
        now: () => 0
      })
      const asked: Array<string | null> = []
      const state = SandboxState.make({
        sandboxLog: refusingLog().service,
        sandbox,
        loginOf: (c) => {
          asked.push(c.credentials)
          return c.credentials === "sealed" ? "user_good" : "user_good_relinked"
        }
      })
      const key = Sandbox.keyOf("provider_a", "CO", "user_good")
      const faultServed = (row: Connection) => state.read(row, Effect.sync(() => sandbox.fault(key)))
      // each request reads its own copy of the row
      for (let i = 0; i < 5; i++) assert.strictEqual(yield* faultServed(connection(0)), undefined)
      assert.deepStrictEqual(asked, ["sealed"])
      // another node stored a fault, then wrote and cleared it: each seen by the next read, no login derived
      const outage = connection(0, { sandbox_fault: JSON.stringify({ kind: "outage" }) })
      assert.deepStrictEqual(yield* faultServed(outage), { kind: "outage" })
      assert.deepStrictEqual(yield* faultServed({ ...outage }), { kind: "outage" })
      assert.strictEqual(yield* faultServed(connection(1)), undefined)
      assert.deepStrictEqual(asked, ["sealed"])
      // another node relinked it (a new ciphertext): the login is derived again, once
      const relinked = connection(1, { credentials: "sealed-again" })
      yield* state.read(relinked, Effect.void)
      yield* state.read({ ...relinked }, Effect.void)
      assert.deepStrictEqual(asked, ["sealed", "sealed-again"])
      assert.isTrue(sandbox.has("provider_a", "CO", "user_good_relinked"))
    }))

  it.effect("a production connection passes straight through: no world, and a stale commit is 409", () =>
    Effect.gen(function*() {
      const { sandbox, state } = setup()
      const production = connection(3, { is_sandbox: false })
      assert.strictEqual(yield* state.read(production, Effect.succeed("upstream")), "upstream")
      const version = yield* state.write(production, (commit, version) => Effect.as(commit, version))
      assert.strictEqual(version, 3)
      const failed = yield* Effect.flip(state.write(production, () => Effect.fail(new Replicas.StaleReplica())))
      assert.strictEqual(failed.error.code, "write_conflict")
      assert.deepStrictEqual(sandbox.keys(), [])
    }))
})
