import { assert, describe, it } from "@effect/vitest"
import { Ids, LabResult, WebhookEvent } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as samples from "./support/samples.js"

const decode = Schema.decodeUnknownEither(WebhookEvent.WebhookEvent, { onExcessProperty: "error" })
const failing = {
  ...samples.labResult,
  overall_passed: false,
  results: [...samples.labResult.results, {
    name: "Pesticides",
    category: "pesticides",
    value: null,
    unit: null,
    passed: false,
    notes: null
  }]
}
const labEvent = {
  id: "evt_abc123",
  type: "lab_result.received",
  created: "2026-02-03T10:00:00Z",
  api_version: "0.1.0",
  data: {
    id: failing.id,
    connection_id: "conn_1",
    facility_id: samples.facilityId,
    package_id: samples.pkg.id,
    package_tag: samples.pkg.tag,
    passed: false,
    failed_panel: LabResult.failedPanel(failing),
    lab_result: failing
  }
}

describe("WebhookEvent", () => {
  it("decodes the three delivery bodies of DECISIONS", () => {
    assert.isTrue(Either.isRight(decode(labEvent)))
    assert.deepStrictEqual(labEvent.data.failed_panel, ["Pesticides"])
    const transferData = {
      id: samples.transfer.id,
      connection_id: "conn_1",
      facility_id: samples.facilityId,
      transfer: samples.transfer
    }
    for (const type of ["transfer.arrived", "transfer.completed"]) {
      assert.isTrue(Either.isRight(decode({ ...labEvent, type, data: transferData })), type)
    }
  })

  it("refuses unknown event types, other api versions and mismatched data", () => {
    assert.isTrue(Either.isLeft(decode({ ...labEvent, type: "package.created" })))
    assert.isTrue(Either.isLeft(decode({ ...labEvent, api_version: "0.2.0" })))
    assert.isTrue(Either.isLeft(decode({ ...labEvent, type: "transfer.arrived" })))
    assert.isTrue(Either.isLeft(decode({ ...labEvent, id: "abc" })))
  })

  it("lists exactly the spec's event names and the managed sync's (DECISIONS)", () => {
    assert.deepStrictEqual(WebhookEvent.EventType.literals, [
      "transfer.arrived",
      "transfer.completed",
      "lab_result.received",
      "sync.updates_available",
      "connection.login_required",
      "connection.degraded"
    ])
  })

  it("decodes the managed sync's events", () => {
    const base = { id: "evt_1", created: "2026-03-14T16:20:05Z", api_version: WebhookEvent.API_VERSION }
    const ids = { connection_id: "conn_1", facility_id: "fac_1" }
    assert.isTrue(Either.isRight(decode({ ...base, type: "sync.updates_available", data: { ...ids, changes: 3 } })))
    assert.isTrue(
      Either.isRight(decode({ ...base, type: "connection.login_required", data: { connection_id: "conn_1" } }))
    )
    assert.isTrue(Either.isRight(decode({ ...base, type: "connection.degraded", data: { ...ids, error: "timeout" } })))
    assert.isTrue(Either.isLeft(decode({ ...base, type: "sync.updates_available", data: { ...ids } })))
  })

  it("make builds each type's body in an envelope, typed per type and checked against its schema", () => {
    const envelope = WebhookEvent.envelope("evt_abc123", Date.parse("2026-02-03T10:00:00.750Z"))
    assert.deepStrictEqual(envelope, { id: "evt_abc123", created: "2026-02-03T10:00:00.000Z" })
    const connection_id = Ids.ConnectionId.make("conn_1")
    const facility_id = Ids.FacilityId.make(samples.facilityId)
    const arrived = WebhookEvent.make("transfer.arrived", envelope, {
      id: samples.transfer.id,
      connection_id,
      facility_id,
      transfer: samples.transfer
    })
    assert.strictEqual(arrived.type, "transfer.arrived")
    assert.strictEqual(arrived.api_version, WebhookEvent.API_VERSION)
    assert.isTrue(Either.isRight(decode(Schema.encodeSync(WebhookEvent.WebhookEvent)(arrived))))
    const degraded = WebhookEvent.make("connection.degraded", envelope, {
      connection_id,
      facility_id,
      error: "timeout"
    })
    assert.deepStrictEqual(degraded, {
      id: envelope.id,
      created: envelope.created,
      api_version: WebhookEvent.API_VERSION,
      type: "connection.degraded",
      data: { connection_id, facility_id, error: "timeout" }
    })
    // the data of another type does not compile
    // @ts-expect-error transfer.arrived carries a transfer, not a sync count
    assert.throws(() => WebhookEvent.make("transfer.arrived", envelope, { connection_id, facility_id, changes: 1 }))
    // a value the type allows but the schema refuses is a defect
    assert.throws(() =>
      WebhookEvent.make("sync.updates_available", envelope, { connection_id, facility_id, changes: 1.5 })
    )
  })

  it("wrap puts a change (type and data, no connection) in a connection's envelope, as make would build it", () => {
    const envelope = WebhookEvent.envelope("evt_abc123", Date.parse("2026-02-03T10:00:00.750Z"))
    const facility_id = Ids.FacilityId.make(samples.facilityId)
    const change: WebhookEvent.Change = {
      type: "transfer.arrived",
      data: { id: samples.transfer.id, facility_id, transfer: samples.transfer }
    }
    assert.notProperty(change, "id")
    assert.notProperty(change, "created")
    assert.notProperty(change.data, "connection_id")
    const event = WebhookEvent.wrap(change, envelope, "conn_1")
    const made = WebhookEvent.make("transfer.arrived", envelope, {
      id: samples.transfer.id,
      connection_id: Ids.ConnectionId.make("conn_1"),
      facility_id,
      transfer: samples.transfer
    })
    assert.deepStrictEqual(event, made)
    // the same body on the wire, fields in the schema's order
    assert.strictEqual(JSON.stringify(event), JSON.stringify(made))
    assert.isTrue(Either.isRight(decode(Schema.encodeSync(WebhookEvent.WebhookEvent)(event))))
    // data the type allows but the schema refuses is a defect, as with make
    assert.throws(() =>
      WebhookEvent.wrap({ type: "sync.updates_available", data: { facility_id, changes: 1.5 } }, envelope, "conn_1")
    )
  })
})
