import { assert, describe, it } from "@effect/vitest"
import { Transfer, WebhookEvent } from "@tracebridge/core"
import type { Writes } from "@tracebridge/sandbox"
import { Faults, Licensees, Registry, Sandbox, Scenario } from "@tracebridge/sandbox"
import { Either, Schema } from "effect"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 3_600_000

const setup = () => {
  const sandbox = new Sandbox.Sandbox({
    providers: Registry.installed,
    seed: "42",
    referenceDate: REFERENCE,
    now: () => NOW
  })
  const world = sandbox.world("provider_a", "CO", "user_good")
  const events: Array<Sandbox.ChangeEvent> = []
  sandbox.subscribe((e) => events.push(e))
  const run = (name: string, params: unknown = {}) =>
    sandbox.apply<Scenario.Outcome, Scenario.Failure>(world, {
      _tag: "Scenario",
      input: { name, params, at: NOW }
    })
  return { sandbox, world, events, run }
}

const isEvent = Schema.is(WebhookEvent.WebhookEvent)

/** The event a connection hears of an outcome's change: the change in the connection's envelope. */
const eventOf = (world: Parameters<typeof Scenario.eventId>[0], outcome: Scenario.Outcome) =>
  WebhookEvent.wrap(
    outcome.change!,
    WebhookEvent.envelope(Scenario.eventId(world, outcome.serial!), NOW),
    "conn_test"
  )

describe("Scenario", () => {
  it("transfer_arrived sets the arrival of an incoming transfer and answers transfer.arrived", () => {
    const { events, run, world } = setup()
    const pending = world.transfers.find((t) => t.transfer.status === "pending" && t.transfer.packages.length > 0)!
    const outcome = Either.getOrThrow(run("transfer_arrived", { transfer_id: pending.transfer.id }))
    const after = world.transfers.find((t) => t.transfer.id === pending.transfer.id)!.transfer
    assert.strictEqual(after.status, "in_transit")
    assert.strictEqual(after.actual_arrival, new Date(NOW).toISOString())
    assert.isNotNull(after.actual_departure)
    assert.strictEqual(outcome.change!.type, "transfer.arrived")
    assert.strictEqual(outcome.change!.type === "transfer.arrived" && outcome.change!.data.id, pending.transfer.id)
    const event = eventOf(world, outcome)
    assert.isTrue(isEvent(event))
    assert.strictEqual((event.data as { connection_id: string }).connection_id, "conn_test")
    assert.strictEqual(events.length, 1)
  })

  it("transfer_arrived of an outgoing transfer to another licensee answers for the shipper, never a crash (issue #30)", () => {
    const { run, sandbox, world } = setup()
    const data = world.facilities[0]!
    const busy = new Set(
      world.transfers.filter((t) => t.transfer.status === "pending").flatMap((t) =>
        t.transfer.packages.map((p) => p.tag)
      )
    )
    const pkg = data.packages.find((p) => !p.is_on_hold && !busy.has(p.tag))!
    const to = (recipient: string) =>
      sandbox.apply<Transfer.Transfer, Writes.Refusal>(world, {
        _tag: "CreateTransfer",
        input: {
          license: data.facility.license_number,
          recipient,
          transferType: "Wholesale",
          tags: [pkg.tag],
          estimatedDeparture: null,
          estimatedArrival: null,
          driverName: null,
          vehicleInfo: null,
          transporter: null,
          template: false,
          at: NOW
        }
      })
    // a licence the state system does not know, or the shipper itself, is refused and changes nothing
    const count = world.transfers.length
    for (const recipient of ["CO-ELSEWHERE-0042", data.facility.license_number]) {
      const refused = to(recipient)
      assert.isTrue(Either.isLeft(refused) && refused.left.reason === "unknown_recipient", recipient)
    }
    assert.strictEqual(world.transfers.length, count)
    const transfer = Either.getOrThrow(to(Licensees.of(world)[1]!.license_number))
    const outcome = Either.getOrThrow(run("transfer_arrived", { transfer_id: transfer.id }))
    assert.strictEqual(outcome.change!.type, "transfer.arrived")
    assert.strictEqual((outcome.change!.data as { facility_id: string }).facility_id, data.facility.id)
    // received by the other licensee: the package has left the world
    Either.getOrThrow(run("transfer_completed", { transfer_id: transfer.id, outcome: "received" }))
    assert.isFalse(data.packages.some((p) => p.tag === pkg.tag))
    assert.isTrue(data.departedPackages.some((p) => p.tag === pkg.tag))
    assert.isFalse(world.facilities.some((d) => d.packages.some((p) => p.tag === pkg.tag)))
  })

  it("knows the state's other licensees: the same for the same world, and none is the login's", () => {
    const { world } = setup()
    const licensees = Licensees.of(world)
    assert.strictEqual(licensees.length, 3)
    assert.deepStrictEqual(Licensees.of(setup().world), licensees)
    const own = new Set(world.facilities.map((d) => d.facility.license_number))
    for (const l of licensees) {
      assert.isFalse(own.has(l.license_number))
      assert.isTrue(Licensees.knows(world, l.license_number))
    }
    // the incoming transfer from outside comes from the first of them
    assert.isTrue(world.transfers.some((t) => t.transfer.shipper_facility === licensees[0]!.license_number))
    assert.isFalse(Licensees.knows(world, "CO-ELSEWHERE-0042"))
  })

  it("transfer_arrived with no transfer named picks one, or creates one from outside", () => {
    const { run, world } = setup()
    const before = world.transfers.length
    for (let i = 0; i < 5; i++) Either.getOrThrow(run("transfer_arrived"))
    assert.isAbove(world.transfers.length, before)
  })

  it("transfer_completed receives an in-transit transfer and moves its packages to the recipient", () => {
    const { run, world } = setup()
    const moving = world.transfers.find((t) => t.transfer.status === "in_transit")!
    const outcome = Either.getOrThrow(
      run("transfer_completed", { transfer_id: moving.transfer.id, outcome: "received" })
    )
    assert.strictEqual(outcome.change!.type, "transfer.completed")
    assert.strictEqual(world.transfers.find((t) => t.transfer.id === moving.transfer.id)!.transfer.status, "received")
    const recipient = world.facilities.find((d) => d.facility.license_number === moving.transfer.recipient_facility)!
    for (const line of moving.transfer.packages) assert.isTrue(recipient.packages.some((p) => p.id === line.package_id))
  })

  it("refuses an impossible move with InvalidStateTransition and changes nothing", () => {
    const { events, run, world } = setup()
    const received = world.transfers.find((t) => t.transfer.status === "received")!
    const before = JSON.stringify(world.transfers)
    const failure = run("transfer_completed", { transfer_id: received.transfer.id, outcome: "rejected" })
    assert.isTrue(Either.isLeft(failure))
    if (Either.isLeft(failure)) assert.strictEqual(failure.left._tag, "InvalidStateTransition")
    const arrived = run("transfer_arrived", { transfer_id: received.transfer.id })
    if (Either.isLeft(arrived)) assert.strictEqual(arrived.left._tag, "InvalidStateTransition")
    else assert.fail("a received transfer cannot arrive again")
    assert.strictEqual(JSON.stringify(world.transfers), before)
    assert.strictEqual(events.length, 0)
    assert.strictEqual(Transfer.TransferStatus.literals.length, 4)
  })

  it("lab_result_received attaches a result, moves the lab state and reports the failed panel", () => {
    const { run, world } = setup()
    const fail = Either.getOrThrow(run("lab_result_received", { result: "fail" }))
    assert.strictEqual(fail.change!.type, "lab_result.received")
    const data = fail.change!.data as WebhookEvent.Change["data"] & {
      passed: boolean
      failed_panel: Array<string>
      package_id: string
    }
    assert.isFalse(data.passed)
    assert.deepStrictEqual(data.failed_panel, ["Microbiologicals", "Pesticides"])
    const pkg = world.facilities.flatMap((d) => d.packages).find((p) => p.id === data.package_id)!
    assert.strictEqual(pkg.lab_testing_state, "TestFailed")
    const pass = Either.getOrThrow(run("lab_result_received"))
    assert.isTrue((pass.change!.data as { passed: boolean }).passed)
    assert.isTrue(isEvent(eventOf(world, pass)))
  })

  it("plant_phase_advanced and package_hold move state through the transition tables, with no event", () => {
    const { run, world } = setup()
    const cultivator = world.facilities[0]!
    const plant = cultivator.plants.find((p) => p.growth_phase === "vegetative")!
    assert.isNull(Either.getOrThrow(run("plant_phase_advanced", { plant_id: plant.id })).change)
    assert.strictEqual(cultivator.plants.find((p) => p.id === plant.id)!.growth_phase, "flowering")
    const again = run("plant_phase_advanced", { plant_id: plant.id })
    assert.isTrue(Either.isLeft(again))
    const pkg = cultivator.packages.find((p) => !p.is_on_hold)!
    Either.getOrThrow(run("package_hold", { package_id: pkg.id, on_hold: true }))
    assert.isTrue(cultivator.packages.find((p) => p.id === pkg.id)!.is_on_hold)
    const same = run("package_hold", { package_id: pkg.id, on_hold: true })
    if (Either.isLeft(same)) assert.strictEqual(same.left._tag, "InvalidStateTransition")
    else assert.fail("holding a held package is not a transition")
  })

  it("connection_login_required flags the login, and unknown scenarios or params are refused", () => {
    const { run, world } = setup()
    const outcome = Either.getOrThrow(run("connection_login_required"))
    assert.isTrue(outcome.loginRequired)
    assert.isTrue(world.loginRequired)
    const unknown = run("meteor_strike")
    if (Either.isLeft(unknown)) assert.strictEqual(unknown.left._tag, "UnknownScenario")
    else assert.fail("unknown scenario ran")
    const bad = run("lab_result_received", { result: "maybe" })
    if (Either.isLeft(bad)) assert.strictEqual(bad.left._tag, "InvalidInput")
    else assert.fail("bad params accepted")
  })

  it("names every scenario of DECISIONS, upstream_timeout included", () => {
    assert.deepStrictEqual([...Scenario.names], [
      "transfer_arrived",
      "transfer_completed",
      "lab_result_received",
      "connection_login_required",
      "plant_phase_advanced",
      "package_hold",
      "upstream_timeout"
    ])
  })

  it("upstream_timeout stops the world's upstream answering (a fault until cleared), with no event or change", () => {
    const { events, run, sandbox, world } = setup()
    const key = Sandbox.keyOf(world.provider, world.state, world.login)
    const before = JSON.stringify(world.facilities)
    const outcome = Either.getOrThrow(run("upstream_timeout"))
    assert.strictEqual(outcome.scenario, "upstream_timeout")
    assert.isNull(outcome.change)
    assert.isFalse(outcome.loginRequired)
    assert.deepStrictEqual(sandbox.fault(key), { kind: "slow", delay_ms: Faults.MAX_DELAY_MS })
    assert.deepStrictEqual(outcome.fault, sandbox.fault(key))
    assert.isAtLeast(Faults.delayFor(sandbox.fault(key)), 600_000, "past any upstream deadline")
    // A fault, not a change to the world: nothing logged (so nothing replayed after a restart), nothing announced.
    assert.deepStrictEqual(sandbox.log(key), [])
    assert.strictEqual(events.length, 0)
    assert.strictEqual(JSON.stringify(world.facilities), before)
    // delay_ms: how long each answer is held back.
    Either.getOrThrow(run("upstream_timeout", { delay_ms: 45_000 }))
    assert.deepStrictEqual(sandbox.fault(key), { kind: "slow", delay_ms: 45_000 })
    for (const bad of [{ delay_ms: -1 }, { delay_ms: "soon" }, { delay_ms: 600_001 }, { colour: "red" }]) {
      const refused = run("upstream_timeout", bad)
      if (Either.isLeft(refused)) assert.strictEqual(refused.left._tag, "InvalidInput", JSON.stringify(bad))
      else assert.fail(`accepted ${JSON.stringify(bad)}`)
    }
    assert.deepStrictEqual(
      sandbox.fault(key),
      { kind: "slow", delay_ms: 45_000 },
      "a refused run changes nothing"
    )
    // Cleared like any fault; another world never sees it.
    assert.isUndefined(sandbox.fault(Sandbox.keyOf("provider_a", "CO", "user_other")))
    sandbox.setFault(key, null)
    assert.isUndefined(sandbox.fault(key))
  })

  it("transfer_arrived answers the change only: the event's type and data, with no envelope (issue #31)", () => {
    const { run } = setup()
    const outcome = Either.getOrThrow(run("transfer_arrived"))
    const change = outcome.change!
    assert.deepStrictEqual(Object.keys(change).sort(), ["data", "type"])
    for (const field of ["id", "created", "created_at", "api_version"]) assert.notProperty(change, field)
    assert.notProperty(change.data, "connection_id")
    assert.isFalse(isEvent(change))
    assert.isNumber(outcome.serial)
    // a state-only scenario has no change, and no number for one
    const held = Either.getOrThrow(run("package_hold"))
    assert.isNull(held.change)
    assert.isUndefined(held.serial)
  })

  it("eventId names a world's events as the sandbox did when it built the envelope (issue #31)", () => {
    const { run, world } = setup()
    const outcome = Either.getOrThrow(run("lab_result_received", { result: "fail" }))
    // the ids the first event of this world had: by the world's own count, and by a caller's number
    assert.strictEqual(Scenario.eventId(world, outcome.serial!), "evt_1690onfjag1")
    assert.strictEqual(Scenario.eventId(world, 101), "evt_1pvbo6r2t")
    assert.strictEqual(eventOf(world, outcome).id, "evt_1690onfjag1")
    // the same for the same world and number; another world's differ
    assert.strictEqual(Scenario.eventId(setup().world, 101), "evt_1pvbo6r2t")
    assert.notStrictEqual(Scenario.eventId({ ...world, login: "user_other" }, 101), "evt_1pvbo6r2t")
  })

  it("replays a stored log that still holds the envelope's inputs (connection id, sequence) to the same world", () => {
    const { run, sandbox, world } = setup()
    Either.getOrThrow(run("lab_result_received", { result: "fail" }))
    Either.getOrThrow(run("transfer_arrived"))
    Either.getOrThrow(run("transfer_completed"))
    const key = Sandbox.keyOf("provider_a", "CO", "user_good")
    // as the API stored them before the envelope left the sandbox, parsed as SandboxState parses them
    const stored = sandbox.log(key).map((change, i) =>
      JSON.parse(JSON.stringify(
        change._tag === "Scenario"
          ? { ...change, input: { ...change.input, connection_id: "conn_test", sequence: i + 1 } }
          : change
      )) as Sandbox.Change
    )
    const replayed = Sandbox.replay(
      {
        providers: Registry.installed,
        seed: "42",
        referenceDate: REFERENCE,
        provider: "provider_a",
        state: "CO",
        login: "user_good"
      },
      stored
    )
    const json = (w: typeof world) => JSON.stringify(w, (_, v) => (v instanceof Map ? [...v.entries()] : v))
    assert.strictEqual(json(replayed), json(world))
  })

  it("replays a change log onto the seeded world to the same state", () => {
    const { sandbox, run, world } = setup()
    Either.getOrThrow(run("lab_result_received", { result: "fail" }))
    Either.getOrThrow(run("transfer_arrived"))
    const replayed = Sandbox.replay(
      {
        providers: Registry.installed,
        seed: "42",
        referenceDate: REFERENCE,
        provider: "provider_a",
        state: "CO",
        login: "user_good"
      },
      sandbox.log(Sandbox.keyOf("provider_a", "CO", "user_good"))
    )
    const json = (w: typeof world) => JSON.stringify(w, (_, v) => (v instanceof Map ? [...v.entries()] : v))
    assert.strictEqual(json(replayed), json(world))
  })
})
