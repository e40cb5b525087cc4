/**
 * `SandboxState` against a stored log that other processes keep writing to: a write that loses the
 * race runs again on the rebuilt world, gives up with 409 `write_conflict` after `MAX_ATTEMPTS`,
 * and leaves nothing uncommitted in memory; a world follows the stored version, and a reset
 * elsewhere regenerates it from the seed.
 */
import { assert, describe, it } from "@effect/vitest"
import { Sandbox } from "@tracebridge/sandbox"
import { Effect, Either, Option } from "effect"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import type * as SandboxLog from "../src/persistence/SandboxLog.js"
import * as SandboxState from "../src/services/SandboxState.js"

const connection = (version: number): Connection => ({
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
  created_at: 0,
  updated_at: 0,
  sandbox_version: version,
  sandbox_fault: null
})

const hold = (at: number): Sandbox.Change => ({
  _tag: "Scenario",
  input: { name: "package_hold", params: {}, at }
})

/** A stored log in memory that another process writes to (`elsewhere`), counting appends. */
const storedLog = () => {
  let version = 0
  const changes: Array<SandboxLog.SandboxChange> = []
  let refuse = false
  const store = {
    appends: 0,
    elsewhere: (change: Sandbox.Change) => {
      version++
      changes.push({ connection_id: "conn_state", seq: version, change: JSON.stringify(change), created_at: 0 })
    },
    resetElsewhere: () => {
      version++
      changes.length = 0
    },
    refuseAll: () => (refuse = true),
    get version() {
      return version
    },
    service: {
      sandboxLog: (_id: string, after: number) =>
        Effect.succeed(Option.some({ version, fault: null, changes: changes.filter((c) => c.seq > after) })),
      appendSandboxChanges: (_id: string, expected: number, fresh: ReadonlyArray<{ readonly change: string }>) =>
        Effect.sync(() => {
          store.appends++
          if (refuse || expected !== version) return false
          for (const c of fresh) {
            version++
            changes.push({ connection_id: "conn_state", seq: version, change: c.change, created_at: 0 })
          }
          return true
        }),
      setSandboxFault: () => Effect.void,
      resetSandbox: () => Effect.void
    } satisfies SandboxLog.Service
  }
  return store
}

const setup = () => {
  const sandbox = new Sandbox.Sandbox({ seed: "42", referenceDate: "1970-01-01T00:00:00.000Z", now: () => 0 })
  const log = storedLog()
  const state = SandboxState.make({ sandboxLog: log.service, sandbox, loginOf: () => "user_good" })
  const key = Sandbox.keyOf("provider_a", "CO", "user_good")
  const onHold = () =>
    sandbox.world("provider_a", "CO", "user_good").facilities.flatMap((f) => f.packages).filter((p) => p.is_on_hold)
      .length
  const write = (at: number) =>
    state.write(connection(log.version), (commit) =>
      Effect.zipRight(
        Effect.sync(() => assert.isTrue(Either.isRight(sandbox.apply(state.world(connection(log.version)), hold(at))))),
        commit
      ))
  return { sandbox, log, state, key, onHold, write }
}

describe("SandboxState", () => {
  it.effect("a write that loses the race runs again on the other process's state, and is stored after it", () =>
    Effect.gen(function*() {
      const { log, onHold, state, write } = setup()
      yield* state.read(connection(0), Effect.void)
      const seeded = onHold()
      // another process holds a package after this one built its world
      let first = true
      const racing = log.service.appendSandboxChanges
      log.service.appendSandboxChanges = (id, expected, fresh) => {
        if (first) {
          first = false
          log.elsewhere(hold(1))
        }
        return racing(id, expected, fresh)
      }
      yield* write(2)
      assert.strictEqual(log.version, 2)
      assert.strictEqual(log.appends, 2)
      // this process serves both holds: the other's and its own, committed after it
      yield* state.read(connection(2), Effect.void)
      assert.strictEqual(onHold(), seeded + 2)
    }))

  it.effect("after MAX_ATTEMPTS conflicts: 409 write_conflict, and nothing uncommitted is served", () =>
    Effect.gen(function*() {
      const { log, onHold, state, write } = setup()
      yield* state.read(connection(0), Effect.void)
      const seeded = onHold()
      log.refuseAll()
      const failed = yield* Effect.flip(write(1))
      assert.strictEqual(failed._tag, "ConflictError")
      assert.strictEqual(failed.error.code, "write_conflict")
      assert.strictEqual(log.appends, SandboxState.MAX_ATTEMPTS)
      yield* state.read(connection(0), Effect.void)
      assert.strictEqual(onHold(), seeded)
    }))

  it.effect("a read follows the stored version; a reset elsewhere regenerates the world", () =>
    Effect.gen(function*() {
      const { log, onHold, state } = setup()
      yield* state.read(connection(0), Effect.void)
      const seeded = onHold()
      log.elsewhere(hold(1))
      log.elsewhere(hold(2))
      yield* state.read(connection(log.version), Effect.void)
      assert.strictEqual(onHold(), seeded + 2)
      log.resetElsewhere()
      log.elsewhere(hold(3))
      yield* state.read(connection(log.version), Effect.void)
      assert.strictEqual(onHold(), seeded + 1)
    }))
})
