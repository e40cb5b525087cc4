import { assert, describe, it } from "@effect/vitest"
import type { Commands } from "@tracebridge/core"
import { Ids, ProviderError, ProviderPort, Session } from "@tracebridge/core"
import { Effect } from "effect"
import * as Memory from "./support/MemoryDriver.js"

const { facilityId, session } = Memory
const first = { page: 1, per_page: 25 }

const fail = <A>(effect: Effect.Effect<A, ProviderError.ProviderError>) => Effect.flip(effect)

describe("ProviderPort", () => {
  it.effect("lists through the provider's smaller pages with exact totals", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make())
      const page2 = yield* port.list("packages", session, facilityId, {}, { page: 2, per_page: 5 })
      assert.deepStrictEqual(page2.pagination, { page: 2, per_page: 5, total: 12, total_pages: 3 })
      assert.deepStrictEqual(page2.items.map((p) => p.provider_package_id), ["P5", "P6", "P7", "P8", "P9"])
      const past = yield* port.list("packages", session, facilityId, {}, { page: 4, per_page: 5 })
      assert.deepStrictEqual(past.items, [])
      assert.strictEqual(past.pagination.total, 12)
      const all = yield* port.listAll("packages", session, facilityId, {})
      assert.strictEqual(all.length, 12)
    }))

  it.effect("applies filters before paging", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make())
      const held = yield* port.list("packages", session, facilityId, { is_on_hold: true }, first)
      assert.deepStrictEqual(held.items.map((p) => p.provider_package_id), ["P4", "P9"])
      assert.strictEqual(held.pagination.total, 2)
    }))

  it.effect("gets by Tracebridge id, and answers unknown, malformed or foreign ids with ResourceNotFound", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const port = ProviderPort.make(driver)
      const id = Ids.make("package", "provider_a", "P3")
      assert.deepStrictEqual(yield* port.get("packages", session, facilityId, id), driver.world.packages[3]!)
      for (
        const bad of [
          Ids.make("package", "provider_a", "nope"),
          "garbage",
          Ids.make("plant", "provider_a", "P3"),
          Ids.make("package", "provider_b", "P3")
        ]
      ) {
        const error = yield* fail(port.get("packages", session, facilityId, bad))
        assert.strictEqual(error._tag, "ResourceNotFound", bad)
      }
      const error = yield* fail(port.list("packages", session, "fac_bogus", {}, first))
      assert.strictEqual(error._tag, "ResourceNotFound")
    }))

  it.effect("gates resources by the state's capabilities and refuses unserved states", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make())
      const gated = yield* fail(port.list("sales_deliveries", session, facilityId, {}, first))
      assert.strictEqual(gated._tag, "CapabilityNotEnabled")
      if (gated._tag === "CapabilityNotEnabled") assert.strictEqual(gated.capability, "sales_deliveries")
      const ma = { ...session, state: "MA" as const }
      const open = yield* port.list("sales_deliveries", ma, facilityId, {}, first)
      assert.strictEqual(open.pagination.total, 3)
      const unserved = yield* fail(port.list("packages", { ...session, state: "TX" as const }, facilityId, {}, first))
      assert.strictEqual(unserved._tag, "UnsupportedState")
      assert.include(unserved.message, "serves CO, MA")
    }))

  it.effect("refuses a session of another provider", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make())
      const error = yield* fail(port.listFacilities({ ...session, provider: "provider_b" }, first))
      assert.strictEqual(error._tag, "InvalidInput")
    }))

  it.effect("names the field when a driver's output leaves the schema", () =>
    Effect.gen(function*() {
      const extra = ProviderPort.make(
        Memory.make({ tamper: (_, item, i) => i === 2 ? { ...item, Quantity: 5 } : item })
      )
      const e1 = yield* fail(extra.list("packages", session, facilityId, {}, first))
      assert.strictEqual(e1._tag, "ProviderInvalidResponse")
      if (e1._tag === "ProviderInvalidResponse") assert.strictEqual(e1.path, "Quantity")

      const wrongType = ProviderPort.make(Memory.make({ tamper: (_, item) => ({ ...item, quantity: "12" }) }))
      const e2 = yield* fail(wrongType.list("packages", session, facilityId, {}, first))
      if (e2._tag === "ProviderInvalidResponse") assert.strictEqual(e2.path, "quantity")
      else assert.fail(e2._tag)

      const otherFacility = ProviderPort.make(
        Memory.make({ tamper: (_, item) => ({ ...item, facility_id: "fac_other" }) })
      )
      const e3 = yield* fail(otherFacility.list("plants", session, facilityId, {}, first))
      if (e3._tag === "ProviderInvalidResponse") assert.strictEqual(e3.path, "0.facility_id")
      else assert.fail(e3._tag)

      const unchecked = ProviderPort.make(Memory.make({ tamper: (_, item) => ({ ...item, Quantity: 5 }) }), {
        validateOutput: false
      })
      const page = yield* unchecked.list("packages", session, facilityId, {}, first)
      assert.strictEqual((page.items[0] as any).Quantity, 5)
    }))

  it.effect("refuses a driver that returns more than the window or a nonsense total", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make({ tamperTotal: () => -1 }))
      const error = yield* fail(port.list("items", session, facilityId, {}, first))
      if (error._tag === "ProviderInvalidResponse") assert.strictEqual(error.path, "total")
      else assert.fail(error._tag)
    }))

  it.effect("passes provider failures through unchanged", () =>
    Effect.gen(function*() {
      const outage = new ProviderError.ProviderUnavailable({
        provider: "provider_a",
        operation: "packages.list",
        message: "down",
        status: 503
      })
      const port = ProviderPort.make(Memory.make({ failures: [outage] }))
      const error = yield* fail(port.list("packages", session, facilityId, {}, first))
      assert.strictEqual(error._tag, "ProviderUnavailable")
      assert.strictEqual(error.message, "down")
      if (error._tag === "ProviderUnavailable") assert.strictEqual(error.status, 503)
      const refused = yield* fail(port.checkCredentials(Session.make({ ...session, credentials: { user_key: "bad" } })))
      assert.strictEqual(refused._tag, "ProviderLoginRequired")
    }))

  it.effect("writes only in the sandbox, validates commands, and checks what the driver returns", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const port = ProviderPort.make(driver)
      const source = driver.world.packages[2]!
      const command = {
        item_name: "Split",
        item_category: "Flower",
        item_strain: null,
        quantity: 5,
        unit_of_measure: "Grams",
        source_package_ids: [source.id]
      }
      const production = yield* fail(port.splitPackage({ ...session, environment: "production" }, facilityId, command))
      assert.strictEqual(production._tag, "SandboxOnly")
      const invalid = yield* fail(port.splitPackage(session, facilityId, { ...command, quantity: -5 }))
      assert.strictEqual(invalid._tag, "InvalidInput")
      if (invalid._tag === "InvalidInput") assert.strictEqual(invalid.path, "quantity")
      const created = yield* port.splitPackage(session, facilityId, command)
      assert.strictEqual(created.quantity, 5)
      assert.strictEqual((yield* port.get("packages", session, facilityId, source.id)).quantity, source.quantity - 5)
      const tooMuch = yield* fail(port.splitPackage(session, facilityId, { ...command, quantity: 10_000 }))
      assert.strictEqual(tooMuch._tag, "InsufficientQuantity")
    }))

  it.effect("takes transfer parties by fac_ id, licence number or exact name, and hands the driver licences", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const sent: Array<{ shipper: string; recipient: string }> = []
      const port = ProviderPort.make({
        ...driver,
        writes: {
          ...driver.writes,
          createTransfer: (s, f, command) => {
            sent.push({ shipper: command.shipper_facility, recipient: command.recipient_facility })
            return driver.writes!.createTransfer!(s, f, command)
          }
        }
      })
      // a package goes on one transfer at a time: each transfer ships one not on its way yet
      const transfer = (shipper_facility: string, recipient_facility: string) => {
        const away = new Set(
          driver.world.transfers.filter((t) => t.status === "pending" || t.status === "in_transit").flatMap((t) =>
            t.packages.map((p) => p.package_id)
          )
        )
        const pkg = driver.world.packages.find((p) => p.facility_id === facilityId && !away.has(p.id))!
        return port.createTransfer(session, facilityId, {
          transfer_type: "Transfer",
          shipper_facility,
          recipient_facility,
          packages: [{
            package_id: pkg.id,
            tag: pkg.tag,
            item_name: pkg.item_name,
            quantity: pkg.quantity,
            unit_of_measure: pkg.unit_of_measure
          }],
          estimated_departure: null,
          estimated_arrival: null,
          transporter: null,
          driver_name: null,
          vehicle_info: null
        })
      }
      const other = Ids.make("facility", "provider_a", Memory.OTHER_LICENSE)
      yield* transfer(facilityId, "Memory Dispensary")
      yield* transfer("Memory Cultivation", other)
      yield* transfer(Memory.LICENSE, Memory.OTHER_LICENSE)
      // another licensee's licence number is the state system's to check
      yield* transfer(facilityId, "CO-OTHER-0042")
      assert.deepStrictEqual(sent, [
        { shipper: Memory.LICENSE, recipient: Memory.OTHER_LICENSE },
        { shipper: Memory.LICENSE, recipient: Memory.OTHER_LICENSE },
        { shipper: Memory.LICENSE, recipient: Memory.OTHER_LICENSE },
        { shipper: Memory.LICENSE, recipient: "CO-OTHER-0042" }
      ])

      const refused = (shipper: string, recipient: string) =>
        Effect.map(fail(transfer(shipper, recipient)), (e) => {
          assert.strictEqual(e._tag, "InvalidInput", e.message)
          return e._tag === "InvalidInput" ? e.path : ""
        })
      // an unknown, foreign or malformed id; a name of no facility; the wrong shipper
      assert.strictEqual(yield* refused(Ids.make("facility", "provider_a", "NOPE-1"), other), "shipper_facility")
      assert.strictEqual(yield* refused(facilityId, Ids.make("facility", "provider_a", "NOPE-1")), "recipient_facility")
      assert.strictEqual(yield* refused(Ids.make("facility", "provider_b", Memory.LICENSE), other), "shipper_facility")
      assert.strictEqual(yield* refused(facilityId, "fac_%%%"), "recipient_facility")
      assert.strictEqual(yield* refused("Memory Nowhere", other), "shipper_facility")
      assert.strictEqual(yield* refused(facilityId, "Memory Nowhere"), "recipient_facility")
      assert.strictEqual(yield* refused(other, facilityId), "shipper_facility")
      assert.strictEqual(yield* refused("Memory Dispensary", facilityId), "shipper_facility")
      assert.strictEqual(sent.length, 4, "nothing refused reached the driver")

      // a name that several facilities carry names none of them
      driver.world.facilities.push({
        ...driver.world.facilities[1]!,
        id: Ids.make("facility", "provider_a", "MEM-LIC-0003"),
        license_number: "MEM-LIC-0003",
        provider_facility_id: "MEM-LIC-0003"
      })
      const ambiguous = yield* fail(transfer(facilityId, "Memory Dispensary"))
      assert.strictEqual(ambiguous._tag, "InvalidInput")
      if (ambiguous._tag === "InvalidInput") {
        assert.strictEqual(ambiguous.path, "recipient_facility")
        assert.include(ambiguous.message, "MEM-LIC-0002")
        assert.include(ambiguous.message, "MEM-LIC-0003")
      }
      assert.strictEqual(sent.length, 4)
    }))

  it.effect("refuses writes the descriptor does not declare", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const port = ProviderPort.make({ ...driver, descriptor: { ...driver.descriptor, writes: [] } })
      const error = yield* fail(port.recordLabResult(session, facilityId, {
        package_id: driver.world.packages[0]!.id,
        lab_name: "x",
        overall_passed: true,
        results: [{ name: "THC", category: "potency", value: 1, unit: "%", passed: true, notes: null }],
        lab_license: null,
        test_type: "ComplianceTesting",
        test_date: null
      }))
      assert.strictEqual(error._tag, "CapabilityNotEnabled")
    }))

  describe("a sandbox lab result at a facility without labs (ADR 0020)", () => {
    const LAB = "MEM-LAB-0001"
    const labId = Ids.make("facility", "provider_a", LAB)
    const command = (packageId: string): Commands.RecordLabResult => ({
      package_id: packageId as Commands.RecordLabResult["package_id"],
      lab_name: "Memory Lab",
      overall_passed: true,
      results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }],
      lab_license: null,
      test_type: "ComplianceTesting",
      test_date: null
    })
    /** The memory driver needing `labs` for lab results, with a lab, recording what the port routes. */
    const withLab = (options: { readonly byLab: boolean; readonly lab: boolean }) => {
      const driver = Memory.make()
      if (options.lab) {
        driver.world.facilities.push({
          ...driver.world.facilities[0]!,
          id: labId,
          name: "Memory Lab",
          license_number: LAB,
          provider_facility_id: LAB,
          license_type: "Testing Laboratory",
          capabilities: ["labs", "packages"]
        })
      }
      const routed: Array<{ readonly at: string; readonly lab: string | undefined }> = []
      const writes = driver.writes!
      const port = ProviderPort.make({
        ...driver,
        descriptor: { ...driver.descriptor, writeNeeds: { record_lab_result: "labs" } },
        writes: {
          ...writes,
          recordLabResult: (s, facility, c) =>
            Effect.tap(writes.recordLabResult!(s, facility, c), () => {
              routed.push({ at: facility.provider_facility_id, lab: undefined })
            }),
          ...(options.byLab
            ? {
              recordLabResultByLab: (s, facility, lab, c) =>
                Effect.tap(writes.recordLabResult!(s, facility, c), () => {
                  routed.push({ at: facility.provider_facility_id, lab: lab.provider_facility_id })
                })
            }
            : {})
        }
      })
      return { driver, port, routed }
    }

    it.effect("goes to the world's lab (a facility of the session with labs), answering the result", () =>
      Effect.gen(function*() {
        const { driver, port, routed } = withLab({ byLab: true, lab: true })
        const pkg = driver.world.packages[0]!
        const created = yield* port.recordLabResult(session, facilityId, command(pkg.id))
        assert.strictEqual(created.package_id, pkg.id)
        assert.strictEqual(created.facility_id, facilityId)
        assert.deepStrictEqual(routed, [{ at: Memory.LICENSE, lab: LAB }])
        // at the lab itself the ordinary write runs, as before
        yield* port.recordLabResult(session, labId, command(pkg.id))
        assert.deepStrictEqual(routed[1], { at: LAB, lab: undefined })
      }))

    it.effect("is refused with CapabilityNotEnabled without a lab route or without a lab, before any write", () =>
      Effect.gen(function*() {
        for (const options of [{ byLab: false, lab: true }, { byLab: true, lab: false }]) {
          const { driver, port, routed } = withLab(options)
          const error = yield* fail(port.recordLabResult(session, facilityId, command(driver.world.packages[0]!.id)))
          assert.strictEqual(error._tag, "CapabilityNotEnabled", JSON.stringify(options))
          assert.include(error.message, "labs")
          // names the facility's capabilities and the way to the same thing (issue #30)
          assert.include(error.message, "cultivation")
          assert.include(error.message, "lab_result_received")
          assert.deepStrictEqual(routed, [])
        }
      }))

    it.effect("still answers SandboxOnly on a production connection", () =>
      Effect.gen(function*() {
        const { driver, port, routed } = withLab({ byLab: true, lab: true })
        const production = { ...session, environment: "production" as const }
        const error = yield* fail(port.recordLabResult(production, facilityId, command(driver.world.packages[0]!.id)))
        assert.strictEqual(error._tag, "SandboxOnly")
        assert.deepStrictEqual(routed, [])
      }))
  })

  it.effect("assembles a chain of custody through the driver's reads", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make())
      const chain = yield* port.chainOfCustody(session, facilityId, Ids.make("package", "provider_a", "P1"))
      assert.deepStrictEqual(chain.plants.map((p) => p.provider_plant_id), ["PL0", "PL1", "PL2"])
      assert.deepStrictEqual(chain.harvests.map((h) => h.provider_harvest_id), ["H0"])
      assert.deepStrictEqual(chain.source_packages.map((p) => p.provider_package_id), ["P0"])
      assert.strictEqual(chain.package.provider_package_id, "P1")
      assert.deepStrictEqual(chain.lab_results.map((r) => r.provider_result_id), ["L0", "L1", "L3", "L4"])
      assert.deepStrictEqual(chain.transfers.map((t) => t.provider_transfer_id), ["T0"])
      assert.deepStrictEqual(chain.sales.map((s) => s.provider_sale_id), ["S0"])
    }))

  it.effect("serves facilities with paging and gets", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(Memory.make())
      const page = yield* port.listFacilities(session, { page: 2, per_page: 1 })
      assert.deepStrictEqual(page.pagination, { page: 2, per_page: 1, total: 2, total_pages: 2 })
      assert.strictEqual((yield* port.getFacility(session, facilityId)).license_number, Memory.LICENSE)
      const missing = yield* fail(port.getFacility(session, Ids.make("facility", "provider_a", "NOPE")))
      assert.strictEqual(missing._tag, "ResourceNotFound")
    }))
})

describe("ProviderPort.departures", () => {
  it.effect("pages the driver's departures with the range's start, and answers none for a list without them", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const asked: Array<string | undefined> = []
      const left = ["pkg_a", "pkg_b", "pkg_c"]
      const port = ProviderPort.make({
        ...driver,
        resources: {
          ...driver.resources,
          packages: {
            ...driver.resources.packages!,
            departures: (_session, _facility, since, window) =>
              Effect.sync(() => {
                asked.push(since)
                return { items: left.slice(window.offset, window.offset + window.limit), total: left.length }
              })
          }
        }
      })
      const range = { from: "2026-03-01T00:00:00.000Z", to: "2026-03-02T00:00:00.000Z" }
      const second = yield* port.departures("packages", session, facilityId, range, { page: 2, per_page: 2 })
      assert.deepStrictEqual(second.items, ["pkg_c"])
      assert.deepStrictEqual(second.pagination, { page: 2, per_page: 2, total: 3, total_pages: 2 })
      assert.deepStrictEqual(asked, [range.from])
      const none = yield* port.departures("plants", session, facilityId, range, first)
      assert.deepStrictEqual([none.items, none.pagination.total], [[], 0])
      const unknown = yield* fail(port.departures("packages", session, "fac_bogus", range, first))
      assert.strictEqual(unknown._tag, "ResourceNotFound")
    }))
})

describe("ProviderPort output checks (ADR 0031)", () => {
  /** A port over the memory driver whose list items at `index` of a window carry a field the spec does not have. */
  const extraAt = (index: number, resource: string = "packages") =>
    Memory.make({ tamper: (name, item, i) => name === resource && i === index ? { ...item, Quantity: 5 } : item })

  it.effect("sample: the first item of a window is checked, the rest is trusted; every item's owner is checked", () =>
    Effect.gen(function*() {
      const port = ProviderPort.make(extraAt(2))
      const sampled = yield* ProviderPort.withOutputCheck(
        port.list("packages", session, facilityId, {}, first),
        "sample"
      )
      assert.strictEqual((sampled.items[2] as any).Quantity, 5)
      assert.strictEqual(sampled.items.length, 12)
      const all = yield* ProviderPort.withOutputCheck(port.listAll("packages", session, facilityId, {}), "sample")
      assert.strictEqual(all.length, 12)
      // without a level set, the port checks every item (its default)
      const whole = yield* fail(port.list("packages", session, facilityId, {}, first))
      assert.strictEqual(whole._tag, "ProviderInvalidResponse")

      const firstBad = ProviderPort.make(extraAt(0))
      const caught = yield* fail(
        ProviderPort.withOutputCheck(
          firstBad.list("packages", session, facilityId, {}, { page: 2, per_page: 5 }),
          "sample"
        )
      )
      if (caught._tag === "ProviderInvalidResponse") assert.strictEqual(caught.path, "Quantity")
      else assert.fail(caught._tag)

      const elsewhere = ProviderPort.make(
        Memory.make({ tamper: (_, item, i) => i === 3 ? { ...item, facility_id: "fac_other" } : item })
      )
      const foreign = yield* fail(
        ProviderPort.withOutputCheck(elsewhere.list("plants", session, facilityId, {}, first), "sample")
      )
      if (foreign._tag === "ProviderInvalidResponse") assert.strictEqual(foreign.path, "3.facility_id")
      else assert.fail(foreign._tag)
    }))

  it.effect("the level the caller sets wins over the port's own option; none checks nothing", () =>
    Effect.gen(function*() {
      const unchecked = ProviderPort.make(extraAt(2), { validateOutput: false })
      const error = yield* fail(
        ProviderPort.withOutputCheck(unchecked.list("packages", session, facilityId, {}, first), "all")
      )
      assert.strictEqual(error._tag, "ProviderInvalidResponse")
      const sampling = ProviderPort.make(extraAt(2), { validateOutput: "sample" })
      assert.strictEqual(
        ((yield* sampling.list("packages", session, facilityId, {}, first)).items[2] as any).Quantity,
        5
      )
      const none = ProviderPort.make(extraAt(0))
      const page = yield* ProviderPort.withOutputCheck(none.list("packages", session, facilityId, {}, first), "none")
      assert.strictEqual((page.items[0] as any).Quantity, 5)
    }))

  it.effect("sample still checks every facility, every get and a whole chain of custody", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const facilities = ProviderPort.make({
        ...driver,
        listFacilities: (s) =>
          Effect.map(driver.listFacilities(s), (fs) => fs.map((f, i) => i === 1 ? { ...f, extra: 1 } : f))
      })
      const listed = yield* fail(ProviderPort.withOutputCheck(facilities.listFacilities(session, first), "sample"))
      assert.strictEqual(listed._tag, "ProviderInvalidResponse")

      const port = ProviderPort.make(extraAt(1, "lab_results"))
      // the list alone passes the sample (its second item is not checked) …
      const results = yield* ProviderPort.withOutputCheck(
        port.listAll("lab_results", session, facilityId, {}),
        "sample"
      )
      assert.isTrue(results.some((r) => (r as any).Quantity === 5))
      // … but a chain of custody is answered whole, so every part of it is checked
      const chain = yield* fail(
        ProviderPort.withOutputCheck(
          port.chainOfCustody(session, facilityId, Ids.make("package", "provider_a", "P1")),
          "sample"
        )
      )
      assert.strictEqual(chain._tag, "ProviderInvalidResponse")
      const inner = driver.resources.packages!
      const tampered = ProviderPort.make({
        ...driver,
        resources: {
          ...driver.resources,
          packages: { ...inner, get: (s, f, id) => Effect.map(inner.get(s, f, id), (p) => ({ ...p, Quantity: 5 })) }
        }
      })
      const got = yield* fail(
        ProviderPort.withOutputCheck(
          tampered.get("packages", session, facilityId, Ids.make("package", "provider_a", "P3")),
          "sample"
        )
      )
      assert.strictEqual(got._tag, "ProviderInvalidResponse")
    }))

  it.effect("a state's capabilities are read from the descriptor once, not on every call", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      let reads = 0
      const capabilities = new Proxy(driver.descriptor.capabilities, {
        get: (target, key) => {
          reads++
          return Reflect.get(target, key)
        }
      })
      const port = ProviderPort.make({ ...driver, descriptor: { ...driver.descriptor, capabilities } })
      yield* port.list("packages", session, facilityId, {}, first)
      yield* port.capabilities("CO")
      const afterFirst = reads
      for (let i = 0; i < 5; i++) {
        yield* port.list("packages", session, facilityId, {}, first)
        yield* port.get("packages", session, facilityId, Ids.make("package", "provider_a", "P3"))
        yield* port.capabilities("CO")
      }
      assert.strictEqual(reads, afterFirst)
      // an unserved state is still refused, naming the states served
      const unserved = yield* fail(port.capabilities("TX"))
      assert.strictEqual(unserved._tag, "UnsupportedState")
    }))
})
