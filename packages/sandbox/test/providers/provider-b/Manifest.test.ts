/**
 * Issue #17, "BioTrack inventory_manifest": the real provider_b adapter against the emulator,
 * served over msw (`support/Upstream.ts`).
 *
 * - `create_transfer` sends BioTrack's documented `employee_id`/`vehicle_id` (strings), resolved
 *   from `driver_name`/`vehicle_info` through `sync_employee`/`sync_vehicle`, and never the
 *   undocumented `transporter_*` keys; a name that matches nothing is `InvalidInput`.
 * - Manifest ids stay strings: a JSON number is taken only when it is exact.
 * - The write is safe to retry: a lost answer is looked up before failing, and the same command
 *   again reuses the pending manifest (and its lines) instead of creating another.
 *
 * Issue #19: the parties are taken by `fac_…` id, licence number or exact name (the port resolves
 * them; BioTrack gets licence numbers), and a manifest carries whole lots (`stop_overview`
 * lists barcodes only): a line of part of a lot is refused at `packages.N.quantity`, sending
 * nothing, instead of being recorded as the whole lot.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { Commands, ProviderError } from "@tracebridge/core"
import { ProviderPort, Session } from "@tracebridge/core"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Effect, Either, Layer } from "effect"
import * as Staff from "../../../src/providers/provider-b/staff.js"
import * as Upstream from "../../support/Upstream.js"

Upstream.useUpstream()

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000
const STATE = "HI"
const LOGIN = "000000000:user_good"
const { good } = Registry.get("provider_b").logins

const port = ProviderB.layer.pipe(Layer.provide(Upstream.httpClient))

type Body = Record<string, unknown>

let sessions = 0

/** A sandbox of its own behind its own upstream host, a session to it, and the seeded cast. */
const setup = (seed = "42") => {
  const sandbox = new Sandbox.Sandbox({ providers: Registry.installed, seed, referenceDate: REFERENCE, now: () => NOW })
  const upstream = Upstream.make(sandbox)
  const world = sandbox.world("provider_b", STATE, LOGIN)
  const facility = (role: string) => world.facilities.find((d) => d.role === role)!
  const cultivator = facility("cultivation")
  const retail = facility("retail")
  const session = Session.make({
    key: `manifest-test-${++sessions}`,
    provider: "provider_b",
    state: STATE,
    environment: "sandbox",
    credentials: good,
    baseUrl: upstream.baseUrl("provider_b", STATE)
  })
  const staff = Staff.of(world)
  const lots = cultivator.packages.filter((p) => !p.is_on_hold && p.quantity > 0)
  const command = (
    overrides: Partial<Commands.CreateTransfer> = {},
    shipped = [lots[0]!]
  ): Commands.CreateTransfer => ({
    transfer_type: "Transfer",
    shipper_facility: cultivator.facility.license_number,
    recipient_facility: retail.facility.license_number,
    packages: shipped.map((p) => ({
      package_id: p.id,
      tag: p.tag,
      item_name: p.item_name,
      quantity: p.quantity,
      unit_of_measure: p.unit_of_measure
    })),
    estimated_departure: null,
    estimated_arrival: null,
    transporter: null,
    driver_name: null,
    vehicle_info: null,
    ...overrides
  })
  const create = (cmd: Commands.CreateTransfer) =>
    Effect.flatMap(ProviderPort.ProviderPort, (p) => p.createTransfer(session, cultivator.facility.id, cmd))
  /** The bodies the adapter sent for one action. */
  const sent = (action: string): Array<Body> =>
    (upstream.bodies as Array<Body>).filter((b) => typeof b === "object" && b !== null && b["action"] === action)
  /** The world's transfers that ship exactly these tags from the cultivator. */
  const manifestsOf = (tags: ReadonlyArray<string>) =>
    world.transfers.filter((t) =>
      t.transfer.shipper_facility === cultivator.facility.license_number &&
      t.transfer.packages.map((p) => p.tag).sort().join(",") === [...tags].sort().join(",")
    )
  return { sandbox, upstream, world, cultivator, retail, session, staff, lots, command, create, sent, manifestsOf }
}

/**
 * The next call of `action` is answered by `respond` (which may forward it to the emulator first);
 * every other call goes to the emulator unchanged. A one-shot of `Upstream.failNext` that hands
 * itself on until the action comes.
 */
const intercept = (
  upstream: Upstream.Upstream,
  action: string,
  respond: (request: Request, emulator: (request: Request) => Promise<Response>) => Promise<Response>
) => {
  const emulator = SandboxServer.makeHandler(upstream.sandbox)
  const oneShot = async (request: Request): Promise<Response> => {
    const body = (await request.clone().json()) as Body
    if (body["action"] === action) return respond(request, emulator)
    upstream.failNext(oneShot)
    return emulator(request)
  }
  upstream.failNext(oneShot)
}

/**
 * The emulator performs the next call of `action`, but its answer is lost: HTTP 500 with an HTML
 * page. `then` runs after (to arrange what comes next).
 */
const loseAnswer = (upstream: Upstream.Upstream, action: string, then: () => void = () => {}) =>
  intercept(upstream, action, async (request, emulator) => {
    await emulator(request)
    then()
    return new Response("<html><body>500 Internal Server Error</body></html>", {
      status: 500,
      headers: { "content-type": "text/html" }
    })
  })

/** The emulator's answer with its text changed by `edit` (e.g. a manifest id written as a number). */
const rewriteAnswer = (upstream: Upstream.Upstream, action: string, edit: (text: string) => string) =>
  intercept(upstream, action, async (request, emulator) => {
    const answer = await emulator(request)
    return new Response(edit(await answer.text()), { status: 200, headers: { "content-type": "application/json" } })
  })

const failureOf = <A>(exit: Either.Either<A, ProviderError.ProviderError>) => {
  assert.isTrue(Either.isLeft(exit), "expected a failure")
  return (exit as Either.Left<ProviderError.ProviderError, A>).left
}

describe("provider_b inventory_manifest: documented fields", () => {
  it.effect("sends employee_id and vehicle_id as strings, never transporter_*, and reads the driver and vehicle back", () =>
    Effect.gen(function*() {
      const s = setup()
      const employee = s.staff.employees[1]!
      const vehicle = s.staff.vehicles.find((v) => v.license === s.cultivator.facility.license_number)!
      // The name in another case and spacing; the vehicle by its plate.
      const shouting = `  ${employee.name.toUpperCase().replace(" ", "   ")} `
      const created = yield* s.create(s.command({ driver_name: shouting, vehicle_info: vehicle.plate.toLowerCase() }))

      const [manifest] = s.sent("inventory_manifest")
      assert.isDefined(manifest)
      assert.strictEqual(manifest!["employee_id"], employee.employee_id)
      assert.strictEqual(manifest!["vehicle_id"], vehicle.vehicle_id)
      assert.strictEqual(manifest!["location"], s.cultivator.facility.license_number)
      assert.deepStrictEqual(Object.keys(manifest!).filter((k) => k.startsWith("transporter")), [])
      assert.isTrue(s.sent("sync_employee").length > 0 && s.sent("sync_vehicle").length > 0)

      assert.strictEqual(created.status, "pending")
      assert.strictEqual(created.driver_name, employee.name)
      assert.strictEqual(created.vehicle_info, Staff.description(vehicle))
      const stored = s.world.transfers.find((t) => t.transfer.id === created.id)!
      assert.strictEqual(stored.transfer.driver_name, employee.name)
      assert.strictEqual(stored.transfer.vehicle_info, Staff.description(vehicle))
      const read = yield* Effect.flatMap(
        ProviderPort.ProviderPort,
        (p) => p.get("transfers", s.session, s.cultivator.facility.id, created.id)
      )
      assert.deepStrictEqual(read, created)
    }).pipe(Effect.provide(port)))

  it.effect("takes an exact employee_id as driver_name, and a vehicle by id, nickname or make and model", () =>
    Effect.gen(function*() {
      const s = setup()
      const employee = s.staff.employees[0]!
      const [first, second] = s.staff.vehicles.filter((v) => v.license === s.cultivator.facility.license_number)
      const byId = yield* s.create(s.command({ driver_name: employee.employee_id, vehicle_info: first!.vehicle_id }))
      assert.strictEqual(byId.driver_name, employee.name)
      assert.strictEqual(byId.vehicle_info, Staff.description(first!))
      const byNickname = yield* s.create(s.command({ vehicle_info: second!.nickname.toUpperCase() }, [s.lots[1]!]))
      assert.strictEqual(byNickname.vehicle_info, Staff.description(second!))
      assert.isNull(byNickname.driver_name)
      assert.isUndefined(s.sent("inventory_manifest")[1]!["employee_id"])
      assert.strictEqual(s.sent("inventory_manifest")[1]!["vehicle_id"], second!.vehicle_id)
      const byMakeModel = yield* s.create(
        s.command({ vehicle_info: ` ${first!.make}  ${first!.model} ` }, [s.lots[2]!])
      )
      assert.strictEqual(byMakeModel.vehicle_info, Staff.description(first!))
    }).pipe(Effect.provide(port)))

  it.effect("sends neither id when the command names no driver or vehicle", () =>
    Effect.gen(function*() {
      const s = setup()
      const created = yield* s.create(s.command())
      const [manifest] = s.sent("inventory_manifest")
      assert.isFalse("employee_id" in manifest! || "vehicle_id" in manifest!)
      assert.deepStrictEqual(Object.keys(manifest!).filter((k) => k.startsWith("transporter")), [])
      assert.deepStrictEqual(s.sent("sync_employee"), [])
      assert.isNull(created.driver_name)
      assert.isNull(created.vehicle_info)
    }).pipe(Effect.provide(port)))

  it.effect("refuses a driver that is no employee of the login with InvalidInput at driver_name, sending nothing", () =>
    Effect.gen(function*() {
      const s = setup()
      const before = s.world.transfers.length
      const error = failureOf(yield* Effect.either(s.create(s.command({ driver_name: "Nobody Atall" }))))
      assert.strictEqual(error._tag, "InvalidInput")
      assert.strictEqual((error as ProviderError.InvalidInput).path, "driver_name")
      assert.include(error.message, "Nobody Atall")
      assert.deepStrictEqual(s.sent("inventory_manifest"), [])
      assert.strictEqual(s.world.transfers.length, before)
    }).pipe(Effect.provide(port)))

  it.effect("refuses a vehicle that matches nothing, or several vehicles, with InvalidInput at vehicle_info", () =>
    Effect.gen(function*() {
      const s = setup()
      const unknown = failureOf(yield* Effect.either(s.create(s.command({ vehicle_info: "Flying Carpet" }))))
      assert.strictEqual(unknown._tag, "InvalidInput")
      assert.strictEqual((unknown as ProviderError.InvalidInput).path, "vehicle_info")
      // Two vehicles of the location with the same make and model (BioTrack's rows, rewritten).
      const location = s.cultivator.facility.license_number
      rewriteAnswer(s.upstream, "sync_vehicle", (text) => {
        const answer = JSON.parse(text) as { vehicle: Array<Body> }
        const ours = answer.vehicle.filter((v) => v["location"] === location)
        for (const v of ours) Object.assign(v, { make: "Ford", model: "Transit" })
        return JSON.stringify(answer)
      })
      const several = failureOf(yield* Effect.either(s.create(s.command({ vehicle_info: "ford transit" }))))
      assert.strictEqual(several._tag, "InvalidInput")
      assert.strictEqual((several as ProviderError.InvalidInput).path, "vehicle_info")
      assert.match(several.message, /several|2 /)
      assert.deepStrictEqual(s.sent("inventory_manifest"), [])
    }).pipe(Effect.provide(port)))
})

describe("provider_b inventory_manifest: manifest ids are strings", () => {
  it.effect("takes a manifest id answered as an exact JSON number, as its 16-digit string", () =>
    Effect.gen(function*() {
      const s = setup()
      rewriteAnswer(
        s.upstream,
        "inventory_manifest",
        (text) => text.replace(/"manifest_id":"(\d{16})"/, "\"manifest_id\":$1")
      )
      const created = yield* s.create(s.command())
      const [outbound] = s.sent("inventory_transfer_outbound")
      assert.strictEqual(typeof outbound!["manifest_id"], "string")
      assert.strictEqual(outbound!["manifest_id"], created.manifest_number)
      assert.match(created.manifest_number, /^\d{16}$/)
    }).pipe(Effect.provide(port)))

  it.effect("never uses a manifest id the JSON number rounded: it looks the manifest up instead", () =>
    Effect.gen(function*() {
      const s = setup()
      // 9007199254740993 is not a safe integer: JSON.parse reads it as …992.
      rewriteAnswer(
        s.upstream,
        "inventory_manifest",
        (text) => text.replace(/"manifest_id":"\d{16}"/, "\"manifest_id\":9007199254740993")
      )
      const created = yield* s.create(s.command())
      const [outbound] = s.sent("inventory_transfer_outbound")
      assert.strictEqual(outbound!["manifest_id"], created.manifest_number)
      assert.notStrictEqual(created.manifest_number, "9007199254740992")
      assert.lengthOf(s.manifestsOf([s.lots[0]!.tag]), 1)
    }).pipe(Effect.provide(port)))
})

describe("provider_b inventory_manifest: safe to retry", () => {
  it.effect("looks a manifest up when its answer is lost, and the same command again makes no second one", () =>
    Effect.gen(function*() {
      const s = setup()
      const tags = [s.lots[0]!.tag, s.lots[1]!.tag]
      const command = s.command({ driver_name: s.staff.employees[0]!.name }, [s.lots[0]!, s.lots[1]!])
      loseAnswer(s.upstream, "inventory_manifest")
      const first = yield* s.create(command)
      assert.lengthOf(s.sent("inventory_manifest"), 1)
      assert.lengthOf(s.sent("inventory_transfer_outbound"), 1)
      assert.lengthOf(s.manifestsOf(tags), 1)

      const again = yield* s.create(command)
      assert.strictEqual(again.id, first.id)
      assert.deepStrictEqual(again, first)
      assert.lengthOf(s.sent("inventory_manifest"), 1, "the retry sent inventory_manifest again")
      assert.lengthOf(s.sent("inventory_transfer_outbound"), 1, "the retry sent the lines again")
      assert.lengthOf(s.manifestsOf(tags), 1)
    }).pipe(Effect.provide(port)))

  it.effect("a retry after a failed call reuses the manifest and sends only the missing lines", () =>
    Effect.gen(function*() {
      const s = setup()
      const tags = [s.lots[0]!.tag]
      // The manifest is made but its answer is lost, and the look-up fails too: the call fails.
      loseAnswer(
        s.upstream,
        "inventory_manifest",
        () => intercept(s.upstream, "sync_manifest", async () => new Response("Bad Gateway", { status: 502 }))
      )
      const error = failureOf(yield* Effect.either(s.create(s.command())))
      assert.strictEqual(error._tag, "ProviderUnavailable")
      assert.lengthOf(s.manifestsOf(tags), 1)
      assert.lengthOf(s.sent("inventory_transfer_outbound"), 0)

      const retried = yield* s.create(s.command())
      assert.lengthOf(s.sent("inventory_manifest"), 1)
      assert.lengthOf(s.sent("inventory_transfer_outbound"), 1)
      assert.lengthOf(s.manifestsOf(tags), 1)
      assert.strictEqual(retried.id, s.manifestsOf(tags)[0]!.transfer.id)
      assert.strictEqual(s.sent("inventory_transfer_outbound")[0]!["manifest_id"], retried.manifest_number)
    }).pipe(Effect.provide(port)))

  it.effect("looks the lines up when the answer of inventory_transfer_outbound is lost", () =>
    Effect.gen(function*() {
      const s = setup()
      loseAnswer(s.upstream, "inventory_transfer_outbound")
      const created = yield* s.create(s.command())
      assert.strictEqual(created.status, "pending")
      assert.lengthOf(s.sent("inventory_transfer_outbound"), 1)
      assert.lengthOf(s.manifestsOf([s.lots[0]!.tag]), 1)
    }).pipe(Effect.provide(port)))

  it.effect("fails with the original error when a lost manifest is not there", () =>
    Effect.gen(function*() {
      const s = setup()
      intercept(s.upstream, "inventory_manifest", async () => new Response("down", { status: 503 }))
      const error = failureOf(yield* Effect.either(s.create(s.command())))
      assert.strictEqual(error._tag, "ProviderUnavailable")
      assert.lengthOf(s.manifestsOf([s.lots[0]!.tag]), 0)
    }).pipe(Effect.provide(port)))

  it.effect("does not reuse a manifest of other lots or to another recipient", () =>
    Effect.gen(function*() {
      const s = setup()
      const one = yield* s.create(s.command())
      // other lots (a lot goes on one manifest at a time: issue #30)
      const more = yield* s.create(s.command({}, [s.lots[1]!, s.lots[2]!]))
      const lab = s.world.facilities.find((d) => d.role === "testing")!.facility.license_number
      const elsewhere = yield* s.create(s.command({ recipient_facility: lab }, [s.lots[3]!]))
      assert.strictEqual(new Set([one.id, more.id, elsewhere.id]).size, 3)
      assert.lengthOf(s.sent("inventory_manifest"), 3)
    }).pipe(Effect.provide(port)))
})

describe("provider_b inventory_manifest: parties and quantities (issue #19)", () => {
  it.effect("takes the parties by fac_ id, licence number or exact name, and sends BioTrack licence numbers", () =>
    Effect.gen(function*() {
      const s = setup()
      const at = s.cultivator.facility
      const to = s.retail.facility
      const forms: ReadonlyArray<readonly [string, string]> = [
        [at.id, to.name],
        [at.name, to.id],
        [at.license_number, to.license_number]
      ]
      for (const [i, [shipper, recipient]] of forms.entries()) {
        const created = yield* s.create(
          s.command({ shipper_facility: shipper, recipient_facility: recipient }, [s.lots[i]!])
        )
        assert.strictEqual(created.shipper_facility, at.license_number)
        assert.strictEqual(created.recipient_facility, to.license_number)
      }
      assert.deepStrictEqual(
        s.sent("inventory_manifest").map((m) => [m["location"], (m["stop_overview"] as any)[0].vendor_license]),
        forms.map(() => [at.license_number, to.license_number])
      )
    }).pipe(Effect.provide(port)))

  it.effect("refuses an unknown recipient name or a shipper that is another facility, sending nothing", () =>
    Effect.gen(function*() {
      const s = setup()
      const unknown = failureOf(yield* Effect.either(s.create(s.command({ recipient_facility: "Nowhere Retail" }))))
      assert.strictEqual(unknown._tag, "InvalidInput")
      if (unknown._tag === "InvalidInput") assert.strictEqual(unknown.path, "recipient_facility")
      const wrong = failureOf(
        yield* Effect.either(s.create(s.command({ shipper_facility: s.retail.facility.id })))
      )
      assert.strictEqual(wrong._tag, "InvalidInput")
      if (wrong._tag === "InvalidInput") assert.strictEqual(wrong.path, "shipper_facility")
      assert.deepStrictEqual(s.sent("inventory_manifest"), [])
    }).pipe(Effect.provide(port)))

  it.effect("refuses a line of part of a lot at packages.N.quantity (split first), sending nothing", () =>
    Effect.gen(function*() {
      const s = setup()
      const lot = s.lots.find((p) => p.quantity >= 2)!
      const cmd = s.command({}, [lot])
      const partial = failureOf(
        yield* Effect.either(s.create({
          ...cmd,
          packages: [{ ...cmd.packages[0]!, quantity: 1 }]
        }))
      )
      assert.strictEqual(partial._tag, "InvalidInput")
      if (partial._tag === "InvalidInput") {
        assert.strictEqual(partial.path, "packages.0.quantity")
        assert.include(partial.message, "whole")
        assert.include(partial.message, "split")
      }
      const more = failureOf(
        yield* Effect.either(s.create({
          ...cmd,
          packages: [{ ...cmd.packages[0]!, quantity: lot.quantity + 1 }]
        }))
      )
      assert.strictEqual(more._tag, "InsufficientQuantity")
      assert.deepStrictEqual(s.sent("inventory_manifest"), [])
      assert.deepStrictEqual(s.sent("inventory_transfer_outbound"), [])
      // the whole lot: the manifest, its line and the transfer read back all show all of it
      const created = yield* s.create(cmd)
      assert.deepStrictEqual(created.packages.map((l) => [l.tag, l.quantity]), [[lot.tag, lot.quantity]])
      const [outbound] = s.sent("inventory_transfer_outbound")
      assert.deepStrictEqual((outbound!["data"] as Array<any>).map((l) => [l.barcodeid, Number(l.quantity)]), [[
        lot.tag,
        lot.quantity
      ]])
    }).pipe(Effect.provide(port)))
})
