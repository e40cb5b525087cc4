/**
 * DECISIONS "Tolerant reads" on the wire: every list's `meta.skipped` says which upstream rows
 * were left out (`[]` when none), and the OpenAPI document says so.
 */
import { assert, describe, it } from "@effect/vitest"
import { Http, Server } from "@tracebridge/http"
import { Effect, Layer } from "effect"
import * as Crypto from "../src/services/Crypto.js"
import { Providers } from "../src/services/Providers.js"
import { readAll } from "./support/FilterAgreement.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

/** `TestApp`, with its services (the sandbox's worlds) in reach of the test. */
const TestAppWithServices = Http.makeHttpLive().pipe(
  Layer.provideMerge(Server.layerTest),
  Layer.provideMerge(Crypto.layerTest),
  Layer.provideMerge(TestDatabase.layer)
)

/**
 * Makes one package of the connection's sandbox world unreadable on the wire, as the adapters'
 * tolerant-read tests do (a quantity that is not a number: Metrc's `Quantity`, BioTrack's
 * `remaining_quantity`). Answers the package's id and tag.
 */
const breakPackage = (connectionId: string, facilityId: string) =>
  Effect.gen(function*() {
    const { sandbox } = yield* Providers
    const key = sandbox.keys().find((k) => k.includes(connectionId))
    assert.isDefined(key, "the connection's world is in memory")
    const [provider, state, ...login] = key!.split("|")
    const world = sandbox.world(provider as never, state as never, login.join("|"))
    const data = world.facilities.find((d) => d.facility.id === facilityId)!
    const broken = data.packages[Math.floor(data.packages.length / 2)]!
    ;(broken as unknown as { quantity: unknown }).quantity = "lots"
    return { id: broken.id, tag: broken.tag }
  })

describe("meta.skipped", () => {
  it.effect("is on every list answer, [] when nothing was skipped, and in the OpenAPI document", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, {
        token: me.access
      })
      assert.deepStrictEqual(facilities.body.meta.skipped, [])
      const facility = facilities.body.data[0].id
      const packages = yield* call(
        "GET",
        `/v1/connections/${linked.connection_id}/facilities/${facility}/packages?per_page=5`,
        { token: me.access }
      )
      assert.strictEqual(packages.status, 200, JSON.stringify(packages.body))
      assert.deepStrictEqual(packages.body.meta.skipped, [])
      const connections = yield* call("GET", "/v1/connections", { token: me.access })
      assert.deepStrictEqual(connections.body.meta.skipped, [])

      const spec = (yield* call("GET", "/v1/openapi.json")).body
      const listMeta = spec.components.schemas.ListMeta
      assert.include(listMeta.required, "skipped")
      const row = listMeta.properties.skipped.items
      const skippedRow = row.$ref === undefined ? row : spec.components.schemas[row.$ref.split("/").pop()]
      assert.deepStrictEqual(Object.keys(skippedRow.properties).sort(), ["reason", "upstream_id"])
    }).pipe(Effect.provide(TestApp)))
})

describe("pagination.total with a skipped row (pass-through reads)", () => {
  for (const provider of ["provider_a", "provider_b"] as const) {
    it.live(
      `counts only what the pages deliver: a client paging by total gets every item (${provider})`,
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const { connection_id } = yield* linkSandbox(me.access, provider)
          const facilities = (yield* call("GET", `/v1/connections/${connection_id}/facilities?per_page=100`, {
            token: me.access
          })).body.data as Array<any>
          // the facility with the most packages, read before any of its packages is
          let facility: any
          let most = -1
          const { sandbox } = yield* Providers
          for (const f of facilities) {
            const key = sandbox.keys().find((k) => k.includes(connection_id))!
            const [p, s, ...login] = key.split("|")
            const n = sandbox.world(p as never, s as never, login.join("|")).facilities
              .find((d) => d.facility.id === f.id)?.packages.length ?? 0
            if (n > most) {
              facility = f
              most = n
            }
          }
          const broken = yield* breakPackage(connection_id, facility.id)
          const base = `/v1/connections/${connection_id}/facilities/${facility.id}`
          const pages = [100, 7, 1]
          const reads = []
          for (const perPage of pages) {
            // readAll pages until total_pages and asserts that total = the items delivered
            const read = yield* readAll(me.access, base, "packages", {}, perPage)
            assert.notInclude(read.items.map((p) => p.id), broken.id)
            assert.include(
              read.skipped.map((s) => s.upstream_id),
              broken.tag,
              `per_page=${perPage}: the row is reported in meta.skipped`
            )
            reads.push(read)
          }
          assert.isAbove(reads[0]!.total, 7, "more than one page of 7")
          for (const read of reads) {
            assert.deepStrictEqual(read.items.map((p) => p.id).sort(), reads[0]!.items.map((p) => p.id).sort())
          }
          // and filtered the same way: the held packages, counted as delivered
          yield* readAll(me.access, base, "packages", { is_on_hold: "false" }, 7)
        }).pipe(Effect.provide(TestAppWithServices)),
      120_000
    )
  }
})
