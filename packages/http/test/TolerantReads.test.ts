/**
 * DECISIONS "Tolerant reads" on the wire: every list's `meta.skipped` says which upstream rows
 * were left out (`[]` when none), and the OpenAPI document says so.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

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
