import { assert, describe, it } from "@effect/vitest"
import { WebhookEvent } from "@tracebridge/core"
import { ControlApi, Registry, Sandbox, Scenario } from "@tracebridge/sandbox"
import { Schema } from "effect"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 3_600_000

const scenario = (sandbox: Sandbox.Sandbox, name: string, body: Record<string, unknown>) =>
  ControlApi.handle(
    sandbox,
    new Request(`http://sandbox.test/_sandbox/scenarios/${name}`, {
      method: "POST",
      body: JSON.stringify({ provider: "provider_a", state: "CO", login: "user_good", ...body })
    })
  )

describe("ControlApi", () => {
  it("POST /_sandbox/scenarios/{name} answers the event in its envelope, numbered by the world (issue #31)", async () => {
    const sandbox = new Sandbox.Sandbox({
      providers: Registry.installed,
      seed: "42",
      referenceDate: REFERENCE,
      now: () => NOW
    })
    const failed = await scenario(sandbox, "lab_result_received", {
      params: { result: "fail" },
      connection_id: "conn_ctl"
    })
    assert.strictEqual(failed.status, 200)
    const body = await failed.json()
    assert.deepStrictEqual(Object.keys(body), ["scenario", "event", "login_required"])
    assert.strictEqual(body.scenario, "lab_result_received")
    assert.isFalse(body.login_required)
    const event = WebhookEvent.decode(body.event)
    assert.deepStrictEqual(Object.keys(body.event), ["id", "created", "api_version", "type", "data"])
    // the id this world's first event always had, at the sandbox's time, for the connection named
    assert.strictEqual(event.id, "evt_1690onfjag1")
    assert.strictEqual(event.created, new Date(NOW).toISOString())
    assert.strictEqual(event.type, "lab_result.received")
    assert.strictEqual(event.data.connection_id, "conn_ctl")
    // the next event takes the world's next number; without a connection named, conn_sandbox
    const arrived = await (await scenario(sandbox, "transfer_arrived", {})).json()
    assert.isTrue(Schema.is(WebhookEvent.TransferArrived)(WebhookEvent.decode(arrived.event)))
    assert.strictEqual(arrived.event.data.connection_id, "conn_sandbox")
    assert.notStrictEqual(arrived.event.id, event.id)
    const world = sandbox.world("provider_a", "CO", "user_good")
    assert.strictEqual(arrived.event.id, Scenario.eventId(world, world.counters.next - 1))
    // a state-only scenario answers no event
    const held = await (await scenario(sandbox, "package_hold", {})).json()
    assert.deepStrictEqual(held, { scenario: "package_hold", event: null, login_required: false })
  })
})
