/**
 * The events' store on Postgres (issue #34): the filters of `GET /v1/events` (the delivery-success
 * one is a correlated `EXISTS`), newest first with paging, and the retention's prune that keeps an
 * event still being delivered. Runs with `npm run test:pg` (TEST_DATABASE_URL), in a fresh schema.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as Database from "../src/persistence/Database.js"
import { EventStore } from "../src/persistence/EventStore.js"
import type { DeliveryStatus } from "../src/persistence/WebhookStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("EventStore.pg.test.ts")

const event = (id: string, organisation: string, connection: string, type: string, at: number) => ({
  id,
  organisation_id: organisation,
  connection_id: connection,
  type,
  body: JSON.stringify({ id, type }),
  created_at: at,
  trace_parent: null
})

const delivery = (id: string, eventId: string, type: string, status: DeliveryStatus) => ({
  id,
  organisation_id: "org_a",
  endpoint_id: "wh_a",
  event_id: eventId,
  event_type: type as "transfer.arrived",
  status,
  attempts: status === "pending" ? 1 : 2,
  claims: 0,
  next_attempt_at: status === "pending" ? 0 : null,
  locked_until: null,
  created_at: 0,
  updated_at: 0
})

describe("EventStore (Postgres)", () => {
  it.live(
    "filters, orders newest first, pages, and prunes all but what is still being delivered",
    () =>
      Effect.gen(function*() {
        const scoped = yield* freshSchema(url, "events")
        const program = Effect.gen(function*() {
          const webhooks = yield* WebhookStore
          const events = yield* EventStore
          yield* webhooks.insertWebhookEvent(event("evt_1", "org_a", "conn_1", "lab_result.received", 1_000), [
            delivery("whd_1", "evt_1", "lab_result.received", "succeeded")
          ])
          yield* webhooks.insertWebhookEvent(event("evt_2", "org_a", "conn_2", "transfer.arrived", 2_000), [
            delivery("whd_2", "evt_2", "transfer.arrived", "pending")
          ])
          yield* webhooks.insertWebhookEvent(event("evt_3", "org_a", "conn_1", "transfer.arrived", 3_000), [
            delivery("whd_3", "evt_3", "transfer.arrived", "failed")
          ])
          yield* webhooks.insertWebhookEvent(event("evt_4", "org_a", "conn_1", "lab_result.received", 4_000), [])
          yield* webhooks.insertWebhookEvent(event("evt_x", "org_b", "conn_x", "lab_result.received", 5_000), [])

          const ids = (r: { items: ReadonlyArray<{ id: string }> }) => r.items.map((e) => e.id)
          const all = yield* events.list({ organisationId: "org_a" }, 0, 10)
          assert.deepStrictEqual(ids(all), ["evt_4", "evt_3", "evt_2", "evt_1"])
          assert.strictEqual(all.total, 4)
          assert.deepStrictEqual(ids(yield* events.list({ organisationId: "org_a", connectionId: "conn_1" }, 0, 10)), [
            "evt_4",
            "evt_3",
            "evt_1"
          ])
          assert.deepStrictEqual(
            ids(yield* events.list({ organisationId: "org_a", type: "transfer.arrived" }, 0, 10)),
            [
              "evt_3",
              "evt_2"
            ]
          )
          assert.deepStrictEqual(
            ids(yield* events.list({ organisationId: "org_a", createdFrom: 2_000, createdTo: 3_000 }, 0, 10)),
            ["evt_3", "evt_2"]
          )
          assert.deepStrictEqual(ids(yield* events.list({ organisationId: "org_a", deliverySuccess: false }, 0, 10)), [
            "evt_3",
            "evt_2"
          ])
          assert.deepStrictEqual(ids(yield* events.list({ organisationId: "org_a", deliverySuccess: true }, 0, 10)), [
            "evt_4",
            "evt_1"
          ])
          const second = yield* events.list({ organisationId: "org_a" }, 2, 2)
          assert.deepStrictEqual(ids(second), ["evt_2", "evt_1"])
          assert.strictEqual(second.total, 4)
          assert.isTrue(Option.isNone(yield* events.get("org_a", "evt_x")), "another organisation's")
          assert.deepStrictEqual(
            (yield* events.deliveries(["evt_2", "evt_3"])).map((d) => [d.event_id, d.status]),
            [["evt_2", "pending"], ["evt_3", "failed"]]
          )

          // everything before 4_500: evt_2 is still being delivered and stays
          assert.strictEqual(yield* events.prune(4_500, 2), 2, "a batch at most")
          assert.strictEqual(yield* events.prune(4_500, 2), 1)
          assert.strictEqual(yield* events.prune(4_500, 2), 0)
          assert.deepStrictEqual(ids(yield* events.list({ organisationId: "org_a" }, 0, 10)), ["evt_2"])
          assert.deepStrictEqual(yield* events.deliveries(["evt_1", "evt_3"]), [])
          assert.isTrue(Option.isSome(yield* events.get("org_b", "evt_x")), "another organisation's newer event stays")
        })
        yield* Effect.provide(program, Database.layerPg(scoped))
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
