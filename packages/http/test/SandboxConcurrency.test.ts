/**
 * One API process on the embedded database (DECISIONS "Sandbox state", "Several API nodes"):
 * concurrent writes on one sandbox connection are serialised (201 or 422, never a 500, nothing
 * lost or taken twice), and a restart, even on another day, serves the same world with every
 * accepted write under the id its 201 gave, to concurrent first requests too. The same across
 * two processes on Postgres is `MultiNode.pg.test.ts`.
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Duration, Effect, Layer, TestClock } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import * as Database from "../src/persistence/Database.js"
import * as Crypto from "../src/services/Crypto.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-sandbox-concurrency-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** One encryption key for every process of a test, as an operator configures it. */
const key = randomBytes(32)

/** The service on a database file that outlives it (a process, started again on the same file). */
const processOn = (file: string) =>
  Http.HttpLive.pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Layer.succeed(Crypto.Crypto, Crypto.make([key]))),
    Layer.provideMerge(Layer.orDie(Database.layerSqlite(file)))
  )

interface Package {
  readonly id: string
  readonly quantity: number
  readonly is_on_hold: boolean
  readonly item_name: string
  readonly item_category: string
  readonly unit_of_measure: string
}

/** A linked sandbox connection's first facility: its packages, and a split of one of them. */
const facilityOf = (access: string, connectionId: string) =>
  Effect.gen(function*() {
    const facilities = yield* call("GET", `/v1/connections/${connectionId}/facilities`, { token: access })
    assert.strictEqual(facilities.status, 200, JSON.stringify(facilities.body))
    const base = `/v1/connections/${connectionId}/facilities/${facilities.body.data[0].id}`
    const packages = Effect.map(
      call("GET", `${base}/packages?per_page=100`, { token: access }),
      (r) => r.body.data as ReadonlyArray<Package>
    )
    const get = (id: string) => call("GET", `${base}/packages/${id}`, { token: access })
    const split = (source: Package, quantity: number) =>
      call("POST", `${base}/packages`, {
        token: access,
        json: {
          item_name: source.item_name,
          item_category: source.item_category,
          quantity,
          unit_of_measure: source.unit_of_measure,
          source_package_ids: [source.id]
        }
      })
    return { packages, get, split }
  })

describe("sandbox writes on one process", () => {
  it.effect("six concurrent splits of one package: 201 or 422, never a 500, and the quantities add up", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const facility = yield* facilityOf(me.access, linked.connection_id)
      const source = (yield* facility.packages).find((p) => !p.is_on_hold && p.quantity >= 10)!
      // each takes 40%: two fit, the others must be refused
      const each = Math.floor(source.quantity * 0.4 * 100) / 100
      const answers = yield* Effect.all(
        Array.from({ length: 6 }, () => facility.split(source, each)),
        { concurrency: "unbounded" }
      )
      const statuses = answers.map((a) => a.status)
      assert.isTrue(statuses.every((s) => s === 201 || s === 422 || s === 409), JSON.stringify(statuses))
      const accepted = answers.filter((a) => a.status === 201)
      assert.strictEqual(accepted.length, 2, JSON.stringify(statuses))
      assert.strictEqual(new Set(accepted.map((a) => a.body.data.id)).size, 2)
      const after = (yield* facility.get(source.id)).body.data as Package
      assert.closeTo(source.quantity - after.quantity, each * 2, 1e-9)
      for (const created of accepted) {
        const read = yield* facility.get(created.body.data.id)
        assert.strictEqual(read.status, 200)
        assert.deepStrictEqual(read.body.data, created.body.data)
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("a restart the next day serves the same world and every write under its id, to concurrent first reads", () =>
    Effect.gen(function*() {
      const file = path.join(dir, "restart", "tracebridge.db")
      const first = yield* Effect.gen(function*() {
        const me = yield* signIn
        const linked = yield* linkSandbox(me.access)
        const facility = yield* facilityOf(me.access, linked.connection_id)
        const seeded = yield* facility.packages
        const source = seeded.find((p) => !p.is_on_hold && p.quantity >= 10)!
        const created = [yield* facility.split(source, 1), yield* facility.split(source, 2)]
        assert.deepStrictEqual(created.map((c) => c.status), [201, 201])
        return {
          client: { client_id: me.client_id, client_secret: me.client_secret },
          connection: linked.connection_id,
          packages: yield* facility.packages,
          created: created.map((c) => c.body.data as Package)
        }
      }).pipe(Effect.provide(processOn(file)))

      // the process stops; it starts again a day later, on the same database
      yield* TestClock.adjust(Duration.days(1))
      yield* Effect.gen(function*() {
        const token = yield* call("POST", "/v1/oauth/token", {
          json: { grant_type: "client_credentials", ...first.client }
        })
        const access = token.body.access_token as string
        const facility = yield* facilityOf(access, first.connection)
        // several first requests at once, before this process has the world in memory
        const reads = yield* Effect.all(
          [facility.packages, facility.packages, facility.packages, facility.packages],
          { concurrency: "unbounded" }
        )
        for (const read of reads) assert.deepStrictEqual(read, first.packages)
        for (const created of first.created) {
          assert.deepStrictEqual((yield* facility.get(created.id)).body.data, created)
        }
        // and the next write gets an id never given before
        const source = first.packages.find((p) => p.id !== first.created[0]!.id && !p.is_on_hold && p.quantity >= 10)!
        const next = yield* facility.split(source, 1)
        assert.strictEqual(next.status, 201)
        assert.notInclude(first.packages.map((p) => p.id), next.body.data.id)
      }).pipe(Effect.provide(processOn(file)))
    }))
})
