/**
 * Issue #17, "BioTrack inventory_manifest", on the emulator's side (raw calls, as BioTrack's
 * clients send them): the seeded employees and vehicles (`sync_employee`, `sync_vehicle`), the
 * documented `inventory_manifest` request (ids checked, `transporter_*` keys ignored) and lines
 * that exist only once `inventory_transfer_outbound` sent them.
 */
import { assert, describe, it } from "@effect/vitest"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { Effect } from "effect"
import * as Staff from "../../../src/providers/provider-b/staff.js"

const REFERENCE = "2026-03-15T12:00:00.000Z"
const NOW = Date.parse(REFERENCE) + 60_000
const STATE = "HI"
const LOGIN = "000000000:user_good"
const URL_B = SandboxServer.baseUrl(SandboxServer.IN_PROCESS_ORIGIN, "provider_b", STATE)
const { good } = Registry.get("provider_b").logins

type Body = Record<string, any>

/** A sandbox, a logged-in session and a `call` that sends one action with it. */
const setup = (seed = "42") =>
  Effect.gen(function*() {
    const sandbox = new Sandbox.Sandbox({
      providers: Registry.installed,
      seed,
      referenceDate: REFERENCE,
      now: () => NOW
    })
    const handler = SandboxServer.makeHandler(sandbox)
    const post = (body: Body) =>
      Effect.promise(async () => {
        const response = await handler(new Request(URL_B, { method: "POST", body: JSON.stringify(body) }))
        return (await response.json()) as Body
      })
    const login = yield* post({
      API: "4.0",
      action: "login",
      license_number: good.ubi,
      username: good.username,
      password: good.password
    })
    const call = (action: string, fields: Body = {}) =>
      post({ API: "4.0", action, sessionid: login["sessionid"], ...fields })
    const world = sandbox.world("provider_b", STATE, LOGIN)
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!
    const retail = world.facilities.find((d) => d.role === "retail")!
    const lot = cultivator.packages.find((p) => !p.is_on_hold && p.quantity > 0)!
    const manifest = (fields: Body = {}) =>
      call("inventory_manifest", {
        location: cultivator.facility.license_number,
        stop_overview: [{ vendor_license: retail.facility.license_number, stop_number: 1, barcodeid: [lot.tag] }],
        ...fields
      })
    return { sandbox, world, call, cultivator, retail, lot, manifest }
  })

describe("provider_b emulator: employees and vehicles", () => {
  it.effect("serves seeded employees and vehicles, the same for a seed and other ones for another", () =>
    Effect.gen(function*() {
      const a = yield* setup()
      const employees = (yield* a.call("sync_employee", { download: 1, transaction_start: 0 }))["employee"]
      const vehicles = (yield* a.call("sync_vehicle", { download: 1, transaction_start: 0 }))["vehicle"]
      const facilities = a.world.facilities.length
      assert.lengthOf(employees, facilities * Staff.EMPLOYEES_PER_FACILITY)
      assert.lengthOf(vehicles, facilities * Staff.VEHICLES_PER_FACILITY)
      assert.strictEqual(employees[0].employee_id, "1001")
      assert.strictEqual(vehicles[0].vehicle_id, "1")
      assert.strictEqual(vehicles[0].location, a.cultivator.facility.license_number)
      for (const e of employees) {
        assert.match(e.employee_name, /\S+ \S+/)
        assert.match(`${e.birthmonth}/${e.birthday}/${e.birthyear}`, /^\d{2}\/\d{2}\/\d{4}$/)
        assert.notProperty(e, "location")
      }
      const names = employees.map((e: Body) => String(e.employee_name).toLowerCase())
      assert.strictEqual(new Set(names).size, names.length, "two employees share a name")
      for (const d of a.world.facilities) {
        assert.isTrue(vehicles.some((v: Body) => v.location === d.facility.license_number))
      }

      const again = yield* setup()
      assert.deepStrictEqual(
        (yield* again.call("sync_employee", { download: 1, transaction_start: 0 }))["employee"],
        employees
      )
      assert.deepStrictEqual(
        (yield* again.call("sync_vehicle", { download: 1, transaction_start: 0 }))["vehicle"],
        vehicles
      )
      const other = yield* setup("43")
      const otherNames =
        ((yield* other.call("sync_employee", { download: 1, transaction_start: 0 }))["employee"] as Array<
          Body
        >).map((e) => e.employee_name)
      assert.notDeepEqual(otherNames, employees.map((e: Body) => e.employee_name))
    }))

  it.effect("keeps them out of the world (its JSON, and so its hash, is unchanged)", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const before = JSON.stringify(s.world, (_, v) => (v instanceof Map ? [...v.entries()] : v))
      Staff.of(s.world)
      yield* s.call("sync_employee", { download: 1, transaction_start: 0 })
      assert.strictEqual(JSON.stringify(s.world, (_, v) => (v instanceof Map ? [...v.entries()] : v)), before)
    }))
})

describe("provider_b emulator: inventory_manifest", () => {
  it.effect("records the employee's name and the vehicle's description, and the manifest row names them", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const employee = Staff.of(s.world).employees[4]!
      const vehicle = Staff.of(s.world).vehicles.find((v) => v.license === s.cultivator.facility.license_number)!
      const answer = yield* s.manifest({ employee_id: employee.employee_id, vehicle_id: vehicle.vehicle_id })
      assert.strictEqual(answer["success"], 1, JSON.stringify(answer))
      assert.match(answer["manifest_id"], /^\d{16}$/)
      const stored = s.world.transfers.find((t) => t.transfer.manifest_number === answer["manifest_id"])!
      assert.strictEqual(stored.transfer.driver_name, employee.name)
      assert.strictEqual(stored.transfer.vehicle_info, Staff.description(vehicle))
      const row = ((yield* s.call("sync_manifest", { download: 1, transaction_start: 0 }))["manifest"] as Array<Body>)
        .find((m) => m.manifestid === answer["manifest_id"])!
      assert.strictEqual(row.transporter_id, employee.employee_id)
      assert.strictEqual(row.transporter_name, employee.name)
      assert.strictEqual(row.transporter_dob, Staff.mdy(employee.birth))
      assert.strictEqual(row.transporter_vehicle_details, Staff.details(vehicle))
      assert.strictEqual(row.transporter_vehicle_identification, vehicle.vin)
    }))

  it.effect("refuses an unknown employee_id, and a vehicle of another location, with success 0 and nothing made", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const before = s.world.transfers.length
      const employee = yield* s.manifest({ employee_id: "999999" })
      assert.strictEqual(employee["success"], 0)
      assert.strictEqual(employee["errorcode"], 602)
      assert.include(employee["error"], "999999")
      const elsewhere = Staff.of(s.world).vehicles.find((v) => v.license !== s.cultivator.facility.license_number)!
      const vehicle = yield* s.manifest({ vehicle_id: elsewhere.vehicle_id })
      assert.strictEqual(vehicle["success"], 0)
      assert.strictEqual(vehicle["errorcode"], 602)
      assert.strictEqual(s.world.transfers.length, before)
    }))

  it.effect("ignores the undocumented transporter_* keys: nothing of them is recorded", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const answer = yield* s.manifest({
        transporter_name: "Not An Employee",
        transporter_vehicle_details: "Pink Bus",
        transporter_vehicle_identification: "VIN123"
      })
      assert.strictEqual(answer["success"], 1, JSON.stringify(answer))
      const stored = s.world.transfers.find((t) => t.transfer.manifest_number === answer["manifest_id"])!
      assert.isNull(stored.transfer.driver_name)
      assert.isNull(stored.transfer.vehicle_info)
    }))

  it.effect("has no transfer lines until inventory_transfer_outbound sends them", () =>
    Effect.gen(function*() {
      const s = yield* setup()
      const id = (yield* s.manifest())["manifest_id"]
      const lines = () =>
        Effect.map(
          s.call("sync_inventory_transfer", { download: 1, transaction_start: 0 }),
          (answer) => (answer["inventory_transfer"] as Array<Body>).filter((l) => l.manifestid === id)
        )
      assert.lengthOf(yield* lines(), 0)
      const sent = yield* s.call("inventory_transfer_outbound", {
        manifest_id: id,
        data: [{ barcodeid: s.lot.tag, quantity: String(s.lot.quantity), price: "0.00" }]
      })
      assert.strictEqual(sent["success"], 1, JSON.stringify(sent))
      assert.deepStrictEqual((yield* lines()).map((l) => l.inventoryid), [s.lot.tag])
    }))
})
