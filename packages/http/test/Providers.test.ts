/**
 * `Providers`' per-connection work (issue #35): a connection's session, and the world its sandbox
 * login opens, are made once and kept while the connection row the request read names the same
 * login; a relink (another node's included: the row is read on every request) makes them again.
 * A read the sandbox's read cache answers needs no race against the upstream deadline.
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import type { Context, Exit, Fiber } from "effect"
import { Effect, Layer, Option, Redacted, Supervisor } from "effect"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Crypto from "../src/services/Crypto.js"
import { Providers } from "../src/services/Providers.js"
import { call, linkSandbox, signIn } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** The service on a test server, with its services in reach of the test. */
const TestAppWithServices = Http.makeHttpLive({ worker: false }).pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

/** A linked sandbox connection, its stored row and the services. */
const linked = Effect.gen(function*() {
  const me = yield* signIn
  const { connection_id } = yield* linkSandbox(me.access)
  const store = yield* ConnectionStore
  const providers = yield* Providers
  const row = Option.getOrThrow(yield* store.getConnection(connection_id))
  return { connection_id, me, providers, row, store }
})

describe("Providers", () => {
  it.effect("a connection's session is made once while its row names the same login, and again after a relink", () =>
    Effect.gen(function*() {
      const { connection_id, me, providers, row, store } = yield* linked
      // each request reads its own copy of the row
      const first = yield* providers.session({ ...row })
      assert.strictEqual(yield* providers.session({ ...row }), first)
      assert.strictEqual(yield* providers.session({ ...row, sandbox_version: 3, updated_at: 1 }), first)

      // relinked with another sandbox user, as another node would store it
      const crypto = yield* Crypto.Crypto
      const sealed = crypto.encrypt(JSON.stringify({ user_key: "user_good_relinked" }))
      yield* store.updateConnection(connection_id, { credentials: sealed.ciphertext, key_id: sealed.keyId })
      const relinked = Option.getOrThrow(yield* store.getConnection(connection_id))
      const second = yield* providers.session({ ...relinked })
      assert.notStrictEqual(second, first)
      assert.strictEqual(Redacted.value(second.credentials).user_key, `user_good_relinked~${connection_id}`)
      assert.strictEqual(yield* providers.session({ ...relinked }), second)

      // the next request reads the relinked login's world
      const facilities = yield* call("GET", `/v1/connections/${connection_id}/facilities`, { token: me.access })
      assert.strictEqual(facilities.status, 200, JSON.stringify(facilities.body))
      const facility = facilities.body.data[0].id as string
      const packages = yield* call(
        "GET",
        `/v1/connections/${connection_id}/facilities/${facility}/packages?per_page=3`,
        { token: me.access }
      )
      assert.strictEqual(packages.status, 200, JSON.stringify(packages.body))
      assert.isTrue(providers.sandbox.has("provider_a", "CO", `user_good_relinked~${connection_id}`))

      // disconnected: the login is erased, and the session no longer carries it
      yield* store.updateConnection(connection_id, { status: "inactive", credentials: null, key_id: null })
      const erased = yield* providers.session(Option.getOrThrow(yield* store.getConnection(connection_id)))
      assert.notStrictEqual(erased, second)
      assert.notInclude(JSON.stringify(Redacted.value(erased.credentials)), "user_good_relinked")
    }).pipe(Effect.provide(TestAppWithServices)))

  it.effect("a read the sandbox read cache answers starts no fiber: the upstream deadline races only a call that reaches the emulator (issue #35)", () =>
    Effect.gen(function*() {
      const { providers, row } = yield* linked
      const port = Option.getOrThrow(yield* providers.port(row.provider, true))
      const session = yield* providers.session(row)
      const facility = (yield* port.listFacilities(session, { page: 1, per_page: 1 })).items[0]!.id
      const read = providers.upstream(
        row.provider,
        port.list("packages", session, facility, {}, { page: 1, per_page: 100 })
      )
      const first = yield* startsOf(read)
      // the first read reaches the emulator under the deadline: a timer races it
      assert.isAbove(first.started, 0)
      const again = yield* startsOf(read)
      assert.deepStrictEqual(again.value, first.value)
      assert.strictEqual(again.started, 0, "a kept answer is returned on the request's own fiber")
    }).pipe(Effect.provide(TestAppWithServices)))
})

/** Counts the fibers started while `self` runs. */
class Starts extends Supervisor.AbstractSupervisor<number> {
  started = 0
  get value() {
    return Effect.sync(() => this.started)
  }
  override onStart<A, E, R>(
    _context: Context.Context<R>,
    _effect: Effect.Effect<A, E, R>,
    _parent: Option.Option<Fiber.RuntimeFiber<any, any>>,
    _fiber: Fiber.RuntimeFiber<A, E>
  ) {
    this.started++
  }
  override onEnd<A, E>(_value: Exit.Exit<A, E>, _fiber: Fiber.RuntimeFiber<A, E>) {}
}

const startsOf = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const starts = new Starts()
    return Effect.map(Effect.supervised(self, starts), (value) => ({ value, started: starts.started }))
  })
