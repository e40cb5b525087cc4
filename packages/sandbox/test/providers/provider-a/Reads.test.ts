/**
 * How the provider_a adapter reads Metrc, against its one fake: paging over pages of 20, the calls
 * that enrich a package, the filters Metrc applies and those the adapter applies, lastModified
 * windows and their look-back, local times in the state's time zone, transfer status and direction,
 * camelCase answers, facilities and licence scoping. Each test has its own sandbox and upstream.
 */
import { assert, describe, it } from "@effect/vitest"
import type { ProviderError } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { World } from "@tracebridge/sandbox"
import { Effect, Option } from "effect"
import { useUpstream } from "../../support/Upstream.js"
import * as A from "./Support.js"

useUpstream()

const DAY = 24 * A.HOUR

/**
 * Ids in a stable order: a read in lastModified windows lists records oldest change first, not in
 * the order of Metrc's whole list, so lists are compared as sets (duplicates still count).
 */
const sorted = (ids: ReadonlyArray<string>) => [...ids].sort()

/** The Metrc label behind a package id (package ids derive from labels). */
const tagOf = (id: string) => Option.getOrThrow(Ids.decodeAs("package", "provider_a", id))

describe("ProviderA reads", () => {
  it.effect("gives an exact page 2 of 45 packages at per_page 25, over provider pages of 20", () => {
    const a = A.make({ size: { packages: 58 } })
    const cultivator = a.facility("cultivation")
    assert.strictEqual(cultivator.packages.length, 45, "the cultivator of this world size holds 45 packages")
    // every package changed in the last hour, so that any lastModified window holds them all
    cultivator.packages.forEach((p, i) => a.touch(p.id, A.NOW - (i + 1) * 60_000))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const facility = cultivator.facility.id
        const page2 = yield* port.list("packages", a.session(), facility, {}, { page: 2, per_page: 25 })
        assert.deepStrictEqual(page2.pagination, { page: 2, per_page: 25, total: 45, total_pages: 2 })
        assert.deepStrictEqual(
          page2.items.map((p) => p.provider_package_id),
          cultivator.packages.slice(25).map((p) => p.provider_package_id)
        )
        const past = yield* port.list("packages", a.session(), facility, {}, { page: 3, per_page: 25 })
        assert.deepStrictEqual(past.items, [])
        assert.strictEqual(past.pagination.total, 45)
        const pages = a.queries("/packages/v2/active")
        assert.isTrue(pages.every((q) => Number(q.get("pageSize")) <= 20))
        // page 2 at 25 = items 26..45 = provider page 2 (21..40, skipping 5) and page 3 (41..45)
        assert.includeMembers(pages.map((q) => q.get("pageNumber")), ["2", "3"])
      })
    )
  })

  it.effect("enriches packages with their lab results and source harvests", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const license = cultivator.facility.license_number
    // a package split from another, from a harvest, that then failed its pesticides test
    const split = cultivator.packages.find((p) => p.source_package_ids.length > 0 && p.source_harvest_ids.length > 0)!
    const recorded = a.sandbox.apply(a.world, {
      _tag: "RecordLabResult",
      input: {
        license,
        tag: split.tag,
        results: [
          { name: "THC", value: 21.5, passed: true, notes: null },
          { name: "Microbiologicals", value: 0.1, passed: true, notes: null },
          { name: "Pesticides", value: 0.9, passed: false, notes: "Above action limit" }
        ],
        testDate: "2026-03-10",
        at: A.NOW - 5 * DAY
      }
    })
    assert.isTrue(recorded._tag === "Right", "the lab result was recorded")
    const untested = cultivator.packages.find((p) => p.lab_testing_state === "NotSubmitted")!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const failed = yield* port.get("packages", a.session(), cultivator.facility.id, split.id)
        assert.strictEqual(failed.lab_testing_state, "TestFailed")
        assert.isNotEmpty(split.source_harvest_ids)
        assert.deepStrictEqual(failed.source_harvest_ids, split.source_harvest_ids)
        assert.deepStrictEqual(failed.source_package_ids, split.source_package_ids)
        assert.strictEqual(failed.source_tag, tagOf(split.source_package_ids[0]!))
        const [result] = failed.lab_results
        assert.isFalse(result!.overall_passed)
        assert.deepStrictEqual(
          result!.results.map((r) => [r.name, r.category, r.unit, r.passed]),
          [["THC", "potency", "%", true], ["Microbiologicals", "microbials", "CFU/g", true], [
            "Pesticides",
            "pesticides",
            "ppm",
            false
          ]]
        )
        const none = yield* port.get("packages", a.session(), cultivator.facility.id, untested.id)
        assert.deepStrictEqual(none.lab_results, [])
        assert.isFalse(
          a.upstream.log.some((l) => l.includes(`packageId=${untested.provider_package_id}`)),
          "no results call for an untested package"
        )
      })
    )
  })

  it.effect("filters packages: every kind of hold, lab state and tag, on /active by the mapper's reading", () => {
    const a = A.make({ size: { packages: 58 } })
    const cultivator = a.facility("cultivation")
    // more packages on hold, apart in the list: an administrative hold, an investigation, a recall
    const holding = [6, 16, 36].map((i) => cultivator.packages[i]!).filter((p) => !p.is_on_hold)
    const kinds = ["administrative", "investigation", "recall"] as const
    holding.forEach((p, i) => a.scenario("package_hold", { package_id: p.id, on_hold: true, kind: kinds[i % 3] }))
    assert.sameMembers([...a.world.holds.values()], ["investigation", "recall"])
    const held = cultivator.packages.filter((p) => p.is_on_hold).map((p) => p.provider_package_id)
    assert.isAtLeast(held.length, 4)
    const passed = cultivator.packages.filter((p) => p.lab_testing_state === "TestPassed")
    assert.isAtLeast(passed.length, 2)
    const tagged = cultivator.packages[9]!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const session = a.session()
        const facility = cultivator.facility.id
        const onHold = yield* port.listAll("packages", session, facility, { is_on_hold: true })
        assert.deepStrictEqual(sorted(onHold.map((p) => p.provider_package_id)), sorted(held))
        // Metrc's /onhold is not relied on: the research does not say it lists investigations and recalls
        assert.isFalse(a.upstream.log.some((l) => l.startsWith("GET /packages/v2/onhold")))
        const free = yield* port.list("packages", session, facility, { is_on_hold: false }, { page: 1, per_page: 100 })
        assert.strictEqual(free.pagination.total, cultivator.packages.length - held.length)
        const tested = yield* port.listAll("packages", session, facility, { lab_testing_state: "TestPassed" })
        assert.strictEqual(tested.length, passed.length)
        const byTag = yield* port.listAll("packages", session, facility, { tag: tagged.tag })
        assert.deepStrictEqual(byTag.map((p) => p.provider_package_id), [tagged.provider_package_id])
        const none = yield* port.listAll("packages", session, facility, { tag: "1A4FF0000000000000999999" })
        assert.deepStrictEqual(none, [])
      })
    )
  })

  it.effect("walks lastModified windows of at most 24 h for updated_since", () => {
    const a = A.make({ size: { packages: 58 } })
    const cultivator = a.facility("cultivation")
    // package n (from 1) changed n hours ago: every one in the last 45 hours
    cultivator.packages.forEach((p, i) => a.touch(p.id, A.NOW - (i + 1) * A.HOUR))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const facility = cultivator.facility.id
        const since = new Date(A.NOW - 3 * DAY).toISOString()
        const recent = yield* port.listAll("packages", a.session(), facility, { updated_since: since })
        assert.strictEqual(recent.length, 45)
        const windows = a.queries("/packages/v2/active").filter((q) => q.has("lastModifiedStart"))
        assert.isAtLeast(windows.length, 3)
        for (const q of windows) {
          const span = Date.parse(q.get("lastModifiedEnd")!) - Date.parse(q.get("lastModifiedStart")!)
          assert.isAtMost(span, 24 * A.HOUR)
        }
        const latest = yield* port.listAll("packages", a.session(), facility, {
          updated_since: new Date(A.NOW - 5.5 * A.HOUR).toISOString()
        })
        assert.deepStrictEqual(
          latest.map((p) => p.provider_package_id),
          cultivator.packages.slice(0, 5).map((p) => p.provider_package_id)
        )
      })
    )
  })

  it.effect("refuses updated_since and from older than maxLookbackDays before calling the provider", () => {
    const a = A.make()
    const facility = a.facility("cultivation").facility.id
    return A.withPort((port) =>
      Effect.gen(function*() {
        const session = a.session()
        const calls = a.upstream.log.length
        const old = new Date(A.NOW - 367 * DAY).toISOString()
        const packages = yield* Effect.flip(port.list("packages", session, facility, { updated_since: old }, {
          page: 1,
          per_page: 10
        }))
        assert.strictEqual(packages._tag, "InvalidInput")
        assert.strictEqual((packages as ProviderError.InvalidInput).path, "updated_since")
        const sales = yield* Effect.flip(port.list("sales", session, facility, { from: "1970-01-01T00:00:00Z" }, {
          page: 1,
          per_page: 10
        }))
        assert.strictEqual((sales as ProviderError.InvalidInput).path, "from")
        assert.strictEqual(a.upstream.log.length, calls, "the provider was called")
        const recent = new Date(A.NOW - 300 * DAY).toISOString()
        yield* port.list("harvests", session, facility, { updated_since: recent }, { page: 1, per_page: 10 })
      })
    )
  })

  it.effect("reads sales in 24 h windows over the look-back, in the state's time zone", () => {
    const a = A.make()
    const retail = a.facility("retail")
    // Four receipts either side of the switch to daylight time on 8 March (Denver: UTC-7, then
    // UTC-6); Metrc writes a receipt's SalesDateTime as the local wall-clock time.
    const [s0, s1, s2, s3] = retail.sales
    a.resell(s0!, "2026-03-06T00:35:45.000Z") // 5 March 17:35:45 MST
    a.resell(s1!, "2026-03-07T00:35:45.000Z", { quantity: 3, total: 31, unit_price: 10.3333 }) // 6 March, MST
    a.resell(s2!, "2026-03-08T00:35:45.000Z") // 7 March, MST
    a.resell(s3!, "2026-03-08T23:35:45.000Z") // 8 March 17:35:45 MDT
    // a receipt with no receipt number of Metrc's, only the point of sale's own
    a.edit(
      /^\/sales\/v2\/receipts\/\d+$/,
      (row) => ({ ...row, ReceiptNumber: null, ExternalReceiptNumber: "EXT-0001" })
    )
    return A.withPort((port) =>
      Effect.gen(function*() {
        const session = a.session()
        const facility = retail.facility.id
        const sales = yield* port.listAll("sales", session, facility, {})
        assert.strictEqual(sales.length, retail.sales.length)
        const byId = new Map(sales.map((s) => [s.provider_sale_id, s]))
        assert.strictEqual(byId.get(s0!.provider_sale_id)!.sale_date, "2026-03-06T00:35:45.000Z") // MST, UTC-7
        assert.strictEqual(byId.get(s3!.provider_sale_id)!.sale_date, "2026-03-08T23:35:45.000Z") // MDT from 8 March, UTC-6
        const line = s1!.items[0]!
        assert.deepStrictEqual(byId.get(s1!.provider_sale_id)!.items[0]!, {
          package_id: line.package_id,
          tag: line.tag,
          item_name: line.item_name,
          quantity: 3,
          unit_of_measure: "Grams",
          unit_price: 10.3333,
          discount: 0,
          total: 31
        })
        const receiptCalls = a.upstream.log.filter((l) => l.startsWith("GET /sales/v2/receipts/active"))
        assert.isNotEmpty(receiptCalls)
        assert.isTrue(receiptCalls.every((l) => l.includes("lastModifiedStart")))
        const window = yield* port.listAll("sales", session, facility, {
          from: "2026-03-07T00:00:00Z",
          to: "2026-03-09T00:00:00Z"
        })
        // s1 and s2 are MST evenings (UTC next day); s3 is after the DST switch on 8 March
        assert.deepStrictEqual(
          window.map((s) => s.provider_sale_id).sort(),
          [s1!, s2!, s3!].map((s) => s.provider_sale_id).sort()
        )
        const external = yield* port.get("sales", session, facility, s0!.id)
        assert.strictEqual(external.receipt_number, "EXT-0001")
      })
    )
  })

  it.effect("derives transfer status from deliveries, the rejected list and templates", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    // the seeded cultivator only ships: give it an incoming transfer, in transit
    a.scenario("transfer_arrived", { facility_id: cultivator.facility.id }, A.NOW - A.HOUR)
    const seen = World.transfersOf(a.world, cultivator)
    const incoming = seen.filter((s) => s.direction === "incoming").map((s) => s.transfer)
    const outgoing = seen.filter((s) => s.direction === "outgoing").map((s) => s.transfer)
    const received = outgoing.find((t) => t.status === "received")!
    // Metrc may write an arrival as the state's local wall-clock time, and the vehicle in three fields
    a.edit(/^\/transfers\/v2\/outgoing$/, (page) => ({
      ...page,
      Data: page.Data.map((row: any) =>
        String(row.Id) === received.provider_transfer_id
          ? {
            ...row,
            ActualArrivalDateTime: "2026-03-10T12:55:00.000",
            VehicleMake: "Make",
            VehicleModel: "Model",
            VehicleLicensePlateNumber: "PLATE1"
          }
          : row
      )
    }))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const session = a.session()
        const facility = cultivator.facility.id
        const all = yield* port.listAll("transfers", session, facility, {})
        const statuses = (ts: ReadonlyArray<{ readonly provider_transfer_id: string; readonly status: string }>) =>
          Object.fromEntries(ts.map((t) => [t.provider_transfer_id, t.status]))
        assert.strictEqual(all.length, incoming.length + outgoing.length)
        assert.deepStrictEqual(statuses(all), statuses([...incoming, ...outgoing]))
        assert.includeMembers(all.map((t) => t.status), ["received", "in_transit", "pending", "rejected"])
        const arriving = yield* port.listAll("transfers", session, facility, { direction: "incoming" })
        assert.isNotEmpty(incoming)
        assert.deepStrictEqual(
          sorted(arriving.map((t) => t.provider_transfer_id)),
          sorted(incoming.map((t) => t.provider_transfer_id))
        )
        const rejected = yield* port.listAll("transfers", session, facility, { status: "rejected" })
        assert.deepStrictEqual(
          sorted(rejected.map((t) => t.provider_transfer_id)),
          sorted(outgoing.filter((t) => t.status === "rejected").map((t) => t.provider_transfer_id))
        )
        const got = all.find((t) => t.provider_transfer_id === received.provider_transfer_id)!
        assert.strictEqual(got.actual_arrival, "2026-03-10T18:55:00.000Z") // 12:55 MDT
        assert.isNotEmpty(received.packages)
        assert.deepStrictEqual(got.packages.map((p) => p.tag), received.packages.map((p) => p.tag))
        assert.strictEqual(got.vehicle_info, "Make Model PLATE1")
      })
    )
  })

  // shared/research/provider-payloads/metrc-transfers.json (GET /transfers/v2/rejected): the row
  // carries the shipper and the recipient, and licence numbers come in several documented shapes
  // (`123-ABC`, `3a-X0001`, `402-X0002`; metrc-facilities.json `License.Number`). A manifest the
  // facility rejected itself is listed there too: it is incoming, not outgoing (issue 17).
  it.effect("reads a rejected manifest's direction from its row, whatever the licence's shape (issue 17)", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const license = cultivator.facility.license_number
    a.scenario("transfer_arrived", { facility_id: cultivator.facility.id }, A.NOW - A.HOUR)
    const seen = World.transfersOf(a.world, cultivator)
    const arrived = seen.filter((s) => s.direction === "incoming").map((s) => s.transfer.provider_transfer_id)
    const shipped = seen.filter((s) => s.direction === "outgoing").map((s) => s.transfer.provider_transfer_id)
    // The world holds no manifest its facility rejected: /rejected lists one, in Metrc's own row,
    // shipped from a licence of another shape to the facility's licence in lower case.
    a.edit(/^\/transfers\/v2\/rejected$/, (page) =>
      A.withRows(page, [...page.Data, {
        ...page.Data[0],
        Id: 420,
        ManifestNumber: "0000000420",
        DeliveryId: 4200,
        ShipperFacilityLicenseNumber: "4a-X0001",
        ShipperFacilityName: "Test Shipper 4a",
        RecipientFacilityLicenseNumber: license.toLowerCase(),
        RecipientFacilityName: cultivator.facility.name
      }]))
    return A.withPort((port) =>
      Effect.gen(function*() {
        const session = a.session()
        const facility = cultivator.facility.id
        const ids = (ts: ReadonlyArray<{ readonly provider_transfer_id: string }>) =>
          sorted(ts.map((t) => t.provider_transfer_id))
        const incoming = yield* port.listAll("transfers", session, facility, { direction: "incoming" })
        assert.deepStrictEqual(ids(incoming), sorted([...arrived, "420"]))
        const outgoing = yield* port.listAll("transfers", session, facility, { direction: "outgoing" })
        assert.deepStrictEqual(ids(outgoing), sorted(shipped))
        const all = yield* port.listAll("transfers", session, facility, {})
        assert.deepStrictEqual(ids(all), sorted([...arrived, ...shipped, "420"]))
        const got = incoming.find((t) => t.provider_transfer_id === "420")!
        assert.strictEqual(got.status, "rejected")
        assert.strictEqual(got.shipper_facility, "4a-X0001")
        assert.strictEqual(got.recipient_facility, license.toLowerCase())
        const rejectedIncoming = yield* port.listAll("transfers", session, facility, {
          direction: "incoming",
          status: "rejected"
        })
        assert.deepStrictEqual(ids(rejectedIncoming), ["420"])
      })
    )
  })

  it.effect("lists a harvest's source plants from the plants that name it", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const harvest = cultivator.harvests.find((h) => h.source_plant_ids.length >= 2)!
    return A.withPort((port) =>
      Effect.gen(function*() {
        const got = yield* port.get("harvests", a.session(), cultivator.facility.id, harvest.id)
        assert.deepStrictEqual(got.source_plant_ids, harvest.source_plant_ids)
        assert.isNotNull(harvest.harvested_date)
        assert.strictEqual(got.harvested_date, harvest.harvested_date)
        const clones = yield* port.listAll("plants", a.session(), cultivator.facility.id, { growth_phase: "clone" })
        assert.deepStrictEqual(clones, [])
      })
    )
  })

  it.effect("reads camelCase answers exactly like PascalCase ones", () => {
    const pascal = A.make()
    const camel = A.make({ emulator: { camelCase: true } })
    return A.withPort((port) =>
      Effect.gen(function*() {
        const facility = pascal.facility("cultivation").facility.id
        const raw = yield* Effect.promise(() =>
          fetch(`${camel.upstream.baseUrl("provider_a", "CO")}/facilities/v2/`, {
            headers: { authorization: `Basic ${btoa(`vendor:${A.good.user_key}`)}` }
          }).then((r) => r.json())
        )
        assert.property(raw[0], "license", "the camelCase upstream answers in camelCase")
        assert.notProperty(raw[0], "License")
        const a = yield* port.list("packages", pascal.session(), facility, {}, { page: 1, per_page: 10 })
        const b = yield* port.list("packages", camel.session(), facility, {}, { page: 1, per_page: 10 })
        assert.isNotEmpty(a.items)
        assert.deepStrictEqual(b, a)
        const facilities = yield* port.listFacilities(camel.session(), { page: 1, per_page: 10 })
        assert.strictEqual(facilities.pagination.total, camel.world.facilities.length)
      })
    )
  })

  it.effect("maps facilities, with capabilities from the facility type and status from the licence", () => {
    const a = A.make()
    const cultivator = a.facility("cultivation")
    const retail = a.facility("retail")
    const medical = a.facility("medical")
    // a licence that ended on 2025-06-30
    a.edit(
      /^\/facilities\/v2\/?$/,
      (rows) =>
        rows.map((row: any) =>
          row.License.Number === retail.facility.license_number
            ? { ...row, License: { ...row.License, EndDate: "2025-06-30" } }
            : row
        ),
      1
    )
    return A.withPort((port) =>
      Effect.gen(function*() {
        const page = yield* port.listFacilities(a.session(), { page: 1, per_page: 10 })
        const byId = new Map(page.items.map((f) => [f.id, f]))
        const [first] = page.items
        assert.strictEqual(first!.id, cultivator.facility.id)
        assert.strictEqual(first!.status, "active")
        assert.includeMembers([...first!.capabilities], ["cultivation", "harvests", "packages", "transfers"])
        assert.notInclude([...first!.capabilities], "sales")
        assert.isTrue(first!.user_permissions!.is_owner)
        const shop = byId.get(retail.facility.id)!
        assert.strictEqual(shop.status, "inactive") // licence ended 2025-06-30
        assert.includeMembers([...shop.capabilities], ["packages", "sales", "sales_deliveries", "transfers"])
        assert.notInclude([...shop.capabilities], "cultivation")
        assert.includeMembers([...byId.get(medical.facility.id)!.capabilities], ["patients", "sales"])
        assert.deepStrictEqual(shop.user_permissions!.is_owner, false)
      })
    )
  })

  it.effect("scopes every call to the facility's licence and answers a foreign one with a permission error", () => {
    const a = A.make()
    const other = a.facility("manufacturing")
    return A.withPort((port) =>
      Effect.gen(function*() {
        const items = yield* port.listAll("items", a.session(), other.facility.id, {})
        assert.isNotEmpty(other.items)
        assert.deepStrictEqual(items.map((i) => i.provider_item_id), other.items.map((i) => i.provider_item_id))
        assert.isTrue(a.upstream.log.some((l) => l.includes(`licenseNumber=${other.facility.license_number}`)))
        const error = yield* Effect.flip(
          port.listAll("items", a.session(), Ids.make("facility", "provider_a", "CO-ELSEWHERE-9"), {})
        )
        assert.strictEqual(error._tag, "ProviderPermissionDenied")
        assert.isTrue(
          a.upstream.log.every((l) => l.startsWith("GET /facilities/v2/") || l.includes("licenseNumber="))
        )
      })
    )
  })
})
