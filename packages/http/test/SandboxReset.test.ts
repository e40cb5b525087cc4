/**
 * `POST /v1/sandbox/{connection_id}/reset` (DECISIONS "Sandbox reset and faults"): clears the
 * connection's change log and fault, answers `{connection_id, reset_at}`, is idempotent, and is
 * refused on production connections.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  call,
  insertProductionConnection,
  linkSandbox,
  productionSignIn,
  signIn,
  storedChanges,
  TestApp
} from "./support/TestApp.js"

describe("POST /v1/sandbox/{connection_id}/reset", () => {
  it.effect("forgets the connection's writes, scenarios and fault, and only that connection's", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const other = yield* linkSandbox(me.access)
      const facilitiesOf = (id: string) =>
        Effect.map(call("GET", `/v1/connections/${id}/facilities`, { token: me.access }), (r) => r.body.data)
      const facility = (yield* facilitiesOf(linked.connection_id))[0].id
      const baseOf = (id: string) => `/v1/connections/${id}/facilities/${facility}`
      const packagesOf = (id: string) =>
        Effect.map(
          call("GET", `${baseOf(id)}/packages?per_page=100`, { token: me.access }),
          (r) => r.body.data as Array<any>
        )
      const seeded = yield* packagesOf(linked.connection_id)
      const split = (id: string) => {
        const source = seeded.find((p) => !p.is_on_hold && p.quantity > 10)
        return call("POST", `${baseOf(id)}/packages`, {
          token: me.access,
          json: {
            item_name: source.item_name,
            item_category: source.item_category,
            item_strain: source.item_strain,
            quantity: 5,
            unit_of_measure: source.unit_of_measure,
            source_package_ids: [source.id]
          }
        })
      }
      assert.strictEqual((yield* split(linked.connection_id)).status, 201)
      assert.strictEqual((yield* split(other.connection_id)).status, 201)
      const simulated = yield* call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
        token: me.access,
        json: { scenario: "package_hold" }
      })
      assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
      assert.strictEqual(
        (yield* call("PUT", `/v1/sandbox/${linked.connection_id}/faults`, {
          token: me.access,
          json: { kind: "outage" }
        }))
          .status,
        200
      )
      assert.isAbove((yield* storedChanges(linked.connection_id)).length, 0)

      const reset = yield* call("POST", `/v1/sandbox/${linked.connection_id}/reset`, { token: me.access })
      assert.strictEqual(reset.status, 200, JSON.stringify(reset.body))
      assert.strictEqual(reset.body.data.connection_id, linked.connection_id)
      assert.isFalse(Number.isNaN(Date.parse(reset.body.data.reset_at)))
      // the seeded world again: no split, no hold, no fault, no stored change
      const after = yield* packagesOf(linked.connection_id)
      assert.deepStrictEqual(after, seeded)
      const fault = yield* call("GET", `/v1/sandbox/${linked.connection_id}/faults`, { token: me.access })
      assert.isNull(fault.body.data.fault)
      assert.deepStrictEqual(yield* storedChanges(linked.connection_id), [])
      // the other connection keeps its write
      assert.strictEqual((yield* packagesOf(other.connection_id)).length, seeded.length + 1)
      // idempotent, and writes work again afterwards (and are stored from the start of a new log)
      const again = yield* call("POST", `/v1/sandbox/${linked.connection_id}/reset`, { token: me.access })
      assert.strictEqual(again.status, 200)
      assert.strictEqual((yield* split(linked.connection_id)).status, 201)
      assert.strictEqual((yield* packagesOf(linked.connection_id)).length, seeded.length + 1)
      assert.strictEqual((yield* storedChanges(linked.connection_id)).length, 1)
    }).pipe(Effect.provide(TestApp)))

  it.effect("a scenario after a reset fires a new event (its id never repeats one sent before the reset)", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const { connection_id } = yield* linkSandbox(me.access)
      const hook = yield* call("POST", "/v1/webhooks", {
        token: me.access,
        json: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] }
      })
      assert.strictEqual(hook.status, 201)
      const simulate = () =>
        call("POST", `/v1/sandbox/${connection_id}/simulate`, {
          token: me.access,
          json: { scenario: "transfer_arrived" }
        })
      const before = yield* simulate()
      assert.strictEqual(before.status, 200, JSON.stringify(before.body))
      const reset = yield* call("POST", `/v1/sandbox/${connection_id}/reset`, { token: me.access })
      assert.strictEqual(reset.status, 200)
      const after = yield* simulate()
      assert.strictEqual(after.status, 200, JSON.stringify(after.body))
      assert.strictEqual(after.body.data.deliveries, 1)
      assert.notStrictEqual(after.body.data.event.id, before.body.data.event.id)
      const deliveries = yield* call("GET", `/v1/webhooks/${hook.body.data.id}/deliveries`, { token: me.access })
      assert.deepStrictEqual(
        deliveries.body.data.map((d: { event_id: string }) => d.event_id).sort(),
        [before.body.data.event.id, after.body.data.event.id].sort()
      )
    }).pipe(Effect.provide(TestApp)))

  it.effect("is 403 sandbox_only on a production connection, 404 on another organisation's or an unknown one", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const prod = yield* productionSignIn
      yield* insertProductionConnection(prod.organisation.id, "conn_production_reset")
      const refused = yield* call("POST", "/v1/sandbox/conn_production_reset/reset", { token: prod.access })
      assert.strictEqual(refused.status, 403)
      assert.deepStrictEqual([refused.body.error.type, refused.body.error.code], ["permission_error", "sandbox_only"])
      const foreign = yield* call("POST", `/v1/sandbox/${linked.connection_id}/reset`, { token: prod.access })
      assert.strictEqual(foreign.status, 404)
      const unknown = yield* call("POST", "/v1/sandbox/conn_missing/reset", { token: me.access })
      assert.strictEqual(unknown.status, 404)
    }).pipe(Effect.provide(TestApp)))
})
