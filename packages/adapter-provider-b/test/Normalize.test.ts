import { assert, describe, it } from "@effect/vitest"
import { Normalize } from "@tracebridge/adapter-provider-b"
import type { ProviderError } from "@tracebridge/core"
import { Ids, Package } from "@tracebridge/core"
import { Effect, Either, Schema } from "effect"

const facility_id = Ids.make("facility", "provider_b", "900101")
const o = { facility_id }
const pkg = (barcode: string) => Ids.make("package", "provider_b", barcode)

/** Shaped like the research's sync_inventory row (numbers as numbers, nulls, keyed parents); synthetic values. */
const inventoryRow = {
  currentroom: null,
  deleted: 0,
  id: "1000000000000010",
  inventoryparentid: ["1000000000000011"],
  inventorystatus: null,
  inventorystatustime: 1684591739,
  inventorytype: 28,
  is_sample: null,
  location: "900101",
  net_package: "1",
  parentid: ["1000000000000012"],
  plantid: null,
  productname: "Preroll",
  rec_usableweight: "1",
  remaining_quantity: "1",
  seized: null,
  sessiontime: 1683396546,
  source_id: null,
  strain: "Green Crack",
  transactionid: 81234567,
  transactionid_original: 81234567,
  usable_weight: "1",
  wet: 0
}

const thrown = (f: () => unknown): ProviderError.ProviderInvalidResponse => {
  try {
    f()
  } catch (e) {
    return e as ProviderError.ProviderInvalidResponse
  }
  throw new Error("expected a throw")
}

describe("Normalize", () => {
  it("package: a sync_inventory row becomes a Package with exactly the spec's fields", () => {
    const p = Normalize.normalizeSync.package(inventoryRow, o)
    assert.deepStrictEqual(p, {
      id: pkg("1000000000000010"),
      tag: "1000000000000010",
      source_tag: "1000000000000012",
      item_name: "Preroll",
      item_category: "Flower",
      item_strain: "Green Crack",
      quantity: 1,
      unit_of_measure: "Each",
      lab_testing_state: "NotSubmitted",
      is_on_hold: false,
      packaged_date: "2023-05-06",
      expiration_date: null,
      facility_id,
      provider: "provider_b",
      provider_package_id: "1000000000000010",
      source_harvest_ids: [],
      source_package_ids: [pkg("1000000000000012"), pkg("1000000000000011")],
      lab_results: [],
      metadata: {
        InventoryType: 28,
        InventoryTypeName: "Usable Marijuana",
        UsableWeight: 1,
        NetPackageWeight: 1,
        RoomID: null,
        SourcePlantID: [],
        IsSample: false,
        Dried: true,
        Seized: false,
        Status: null,
        TransactionID: "81234567",
        SessionTime: 1683396546
      }
    })
    assert.isTrue(Either.isRight(Schema.validateEither(Package.Package, { onExcessProperty: "error" })(p)))
  })

  it("package: string numbers, epoch strings and '0'/'1' flags parse; qa samples set the lab state", () => {
    const p = Normalize.normalizeSync.package({
      inventory: {
        ...inventoryRow,
        inventorytype: "6",
        remaining_quantity: "300.50",
        sessiontime: "1767225600",
        seized: "1",
        productname: ""
      },
      inventory_qa_sample: [{
        inventoryid: "1000000000000020",
        parentid: "1000000000000010",
        lab_license: "900901",
        location: "900101",
        result: "-1",
        sessiontime: "1767312000",
        transactionid: "5"
      }],
      inventory_qa_check: [{
        sample_id: "1000000000000020",
        parent_id: "1000000000000010",
        lab_license: "900901",
        result: -1,
        test: [{ type: 6, total_mycotoxins: "3.5" }]
      }]
    }, o)
    assert.strictEqual(p.quantity, 300.5)
    assert.strictEqual(p.unit_of_measure, "Grams")
    assert.strictEqual(p.item_name, "Flower")
    assert.strictEqual(p.packaged_date, "2026-01-01")
    assert.isTrue(p.is_on_hold)
    assert.strictEqual(p.lab_testing_state, "TestFailed")
    assert.deepStrictEqual(p.lab_results.map((r) => r.results), [[
      { name: "total_mycotoxins", category: "mycotoxins", value: 3.5, unit: "ppb", passed: false, notes: null }
    ]])
  })

  it("a QA result of 2 (rejected) reads as a failed test, not a failed table (issue 17)", () => {
    const p = Normalize.normalizeSync.package({
      inventory: { ...inventoryRow, inventorytype: "6", sessiontime: "1767225600" },
      inventory_qa_sample: [{
        inventoryid: "1000000000000021",
        parentid: "1000000000000010",
        lab_license: "900901",
        location: "900101",
        result: "2",
        sessiontime: "1767312000",
        transactionid: "6"
      }],
      inventory_qa_check: [{
        sample_id: "1000000000000021",
        parent_id: "1000000000000010",
        lab_license: "900901",
        result: 2,
        test: [{ type: 6, total_mycotoxins: "3.5" }]
      }]
    }, o)
    assert.strictEqual(p.lab_testing_state, "TestFailed")
    assert.deepStrictEqual(p.lab_results.map((r) => r.overall_passed), [false])
  })

  it("malformed values become ProviderInvalidResponse naming the field", () => {
    const quantity = thrown(() => Normalize.normalizeSync.package({ ...inventoryRow, remaining_quantity: "1,5" }, o))
    assert.strictEqual(quantity._tag, "ProviderInvalidResponse")
    assert.strictEqual(quantity.path, "remaining_quantity")
    assert.include(quantity.message, "1,5")
    assert.strictEqual(
      thrown(() => Normalize.normalizeSync.package({ ...inventoryRow, sessiontime: "yesterday" }, o)).path,
      "sessiontime"
    )
    assert.strictEqual(
      thrown(() => Normalize.normalizeSync.package({ ...inventoryRow, deleted: "2" }, o)).path,
      "deleted"
    )
    assert.strictEqual(thrown(() => Normalize.normalizeSync.package({ ...inventoryRow, id: "12345" }, o)).path, "id")
  })

  it.effect("normalize is the same as an Effect, failing with ProviderInvalidResponse", () =>
    Effect.gen(function*() {
      const p = yield* Normalize.normalize.package(inventoryRow, o)
      assert.strictEqual(p.quantity, 1)
      const error = yield* Effect.flip(Normalize.normalize.sale([], o))
      assert.strictEqual(error._tag, "ProviderInvalidResponse")
    }))

  it("facility: a vendor row", () => {
    assert.deepStrictEqual(
      Normalize.normalizeSync.facility({
        ubi: "900000001",
        location: "900101",
        name: "Synthetic Grow Co",
        locationtype: 3,
        address1: "1 Test Way",
        address2: "STE 2",
        city: "Honolulu",
        state: "HI",
        zip: "96813",
        processor: 1,
        producer: 1,
        retail: 0,
        medical: "1",
        deleted: 0,
        transactionid: 991111
      }, o),
      {
        id: facility_id,
        name: "Synthetic Grow Co",
        display_name: null,
        alias: null,
        license_number: "900101",
        license_type: "producer, processor",
        license_start_date: null,
        license_end_date: null,
        address: "1 Test Way, STE 2",
        city: "Honolulu",
        zip: "96813",
        state: "HI",
        status: "active",
        credentialed_date: null,
        support_activation_date: null,
        support_expiration_date: null,
        provider: "provider_b",
        provider_facility_id: "900101",
        user_permissions: null,
        capabilities: ["cultivation", "harvests", "manufacturing", "packages", "transfers", "patients"],
        facility_type: {
          ubi: "900000001",
          locationtype: 3,
          locationtype_name: "T3",
          producer: true,
          processor: true,
          retail: false,
          medical: true
        }
      }
    )
  })

  it("plant: state codes give the growth phase; derivatives give the harvest date", () => {
    const row = {
      id: "1000000000000101",
      strain: "AK-47",
      room: "7",
      location: "900101",
      state: "0",
      mother: "0",
      harvestscheduled: "1",
      harvestscheduletime: "1767312000",
      deleted: "0",
      sessiontime: 1767225600,
      transactionid: "4815"
    }
    assert.deepStrictEqual(
      Normalize.normalizeSync.plant({
        plant: row,
        plant_room: [{ roomid: "7", name: "Flower A", location: "900101", transactionid: "1" }],
        plant_derivative: [{
          plantid: "1000000000000101",
          inventorytype: "6",
          weight: "100",
          location: "900101",
          sessiontime: "1767398400",
          transactionid: "77"
        }]
      }, o),
      {
        id: Ids.make("plant", "provider_b", "1000000000000101"),
        tag: "1000000000000101",
        strain_name: "AK-47",
        growth_phase: "flowering",
        plant_batch_id: null,
        location: "Flower A",
        planted_date: null,
        vegetative_date: null,
        flowering_date: "2026-01-02",
        harvest_date: "2026-01-03",
        facility_id,
        provider: "provider_b",
        provider_plant_id: "1000000000000101"
      }
    )
    assert.strictEqual(Normalize.normalizeSync.plant({ ...row, harvestscheduled: "0" }, o).growth_phase, "vegetative")
    assert.strictEqual(Normalize.normalizeSync.plant({ ...row, state: 2 }, o).growth_phase, "flowering")
  })

  it("harvest: the derivative rows of one plant-harvest transaction", () => {
    const d = (plantid: string, type: string, weight: string) => ({
      plantid,
      inventoryid: null,
      inventorytype: type,
      weight,
      location: "900101",
      sessiontime: "1767225600",
      transactionid: "6001"
    })
    assert.deepStrictEqual(
      Normalize.normalizeSync.harvest({
        plant_derivative: [
          d("1000000000000101", "6", "150.5"),
          d("1000000000000102", "9", "30.25"),
          d("1000000000000101", "27", "12")
        ],
        plant: [
          { id: "1000000000000101", strain: "AK-47", location: "900101", state: 1, transactionid: "1" },
          { id: "1000000000000102", strain: "AK-47", location: "900101", state: 1, transactionid: "2" }
        ]
      }, o),
      {
        id: Ids.make("harvest", "provider_b", "6001"),
        harvest_name: "AK-47 2026-01-01",
        harvest_type: "WholePlant",
        strain_name: "AK-47",
        harvested_date: "2026-01-01",
        current_weight: 180.75,
        unit_of_measure: "Grams",
        total_waste_weight: 12,
        plant_count: 2,
        source_plant_ids: [
          Ids.make("plant", "provider_b", "1000000000000101"),
          Ids.make("plant", "provider_b", "1000000000000102")
        ],
        facility_id,
        provider: "provider_b",
        provider_harvest_id: "6001"
      }
    )
  })

  it("labResult: a QA sample and its panels, keyed to the source lot, values as numbers with units", () => {
    assert.deepStrictEqual(
      Normalize.normalizeSync.labResult({
        sample: {
          inventoryid: "1000000000000201",
          parentid: "1000000000000010",
          lab_license: "900901",
          location: "900101",
          quantity: "1.00",
          result: "1",
          sample_use: "1",
          sessiontime: "1767225600",
          transactionid: "4863"
        },
        check: {
          sample_id: "1000000000000201",
          parent_id: "1000000000000010",
          lab_license: "900901",
          result: 1,
          use: 1,
          test: [
            { type: 1, moisture: "9.2" },
            { type: 2, THC: "18.876", CBD: "0" },
            { type: 3, Stems: "0" },
            { type: 4, yeast_and_mold: "10" },
            { type: 5, butane: "0" },
            { type: 6, total_mycotoxins: "0" },
            { type: 7, pesticide_residue: "0" },
            { type: 8, heavy_metal: null }
          ]
        },
        vendor: [{ ubi: "900000009", location: "900901", name: "Example QA Lab", transactionid: "1" }]
      }, o),
      {
        id: Ids.make("lab_result", "provider_b", "1000000000000201"),
        package_id: pkg("1000000000000010"),
        lab_name: "Example QA Lab",
        lab_license: "900901",
        test_date: "2026-01-01",
        result_date: null,
        overall_passed: true,
        test_type: "ComplianceTesting",
        results: [
          { name: "moisture", category: "moisture", value: 9.2, unit: "%", passed: true, notes: null },
          { name: "THC", category: "potency", value: 18.876, unit: "%", passed: true, notes: null },
          { name: "CBD", category: "potency", value: 0, unit: "%", passed: true, notes: null },
          { name: "Stems", category: "foreign_matter", value: 0, unit: "%", passed: true, notes: null },
          { name: "yeast_and_mold", category: "microbials", value: 10, unit: "CFU/g", passed: true, notes: null },
          { name: "butane", category: "residual_solvents", value: 0, unit: "ppm", passed: true, notes: null },
          { name: "total_mycotoxins", category: "mycotoxins", value: 0, unit: "ppb", passed: true, notes: null },
          { name: "pesticide_residue", category: "pesticides", value: 0, unit: "ppm", passed: true, notes: null },
          { name: "heavy_metal", category: "heavy_metals", value: null, unit: "ppm", passed: true, notes: null }
        ],
        facility_id,
        provider: "provider_b",
        provider_result_id: "1000000000000201"
      }
    )
  })

  it("transfer: manifest, stop and items; status and times from the manifest and inbound lines", () => {
    const rows = {
      manifest: {
        manifestid: "1000000000000501",
        location: "900101",
        origination_license_number: "900101",
        origination_name: "Synthetic Grow Co",
        transporter_name: "Driver One",
        transporter_dob: "01/01/1980",
        transporter_vehicle_details: "White Van",
        transporter_vehicle_identification: "VIN123",
        stopcount: "1",
        completion_date: "1767229200",
        fulfilled: "0",
        deleted: "0",
        sessiontime: 1767229200,
        transactionid: "9821"
      },
      stop: {
        manifestid: "1000000000000501",
        stopnumber: "1",
        license_number: "900501",
        depart_time: "1767229200",
        arrive_time: "1767232800",
        transactionid: "9821"
      },
      items: [{
        manifestid: "1000000000000501",
        stopnumber: "1",
        inventoryid: "1000000000000010",
        description: "Preroll",
        quantity: "15.00",
        transactionid: "9821"
      }],
      outbound: [{
        inventoryid: "1000000000000010",
        inventorytype: "28",
        quantity: "15",
        manifestid: "1000000000000501",
        manifest_stop: "1",
        location: "900101",
        transactionid: "9822"
      }]
    }
    const expected = {
      id: Ids.make("transfer", "provider_b", "1000000000000501/1"),
      manifest_number: "1000000000000501",
      transfer_type: "Outgoing",
      shipper_facility: "900101",
      recipient_facility: "900501",
      packages: [{
        package_id: pkg("1000000000000010"),
        tag: "1000000000000010",
        item_name: "Preroll",
        quantity: 15,
        unit_of_measure: "Each"
      }],
      status: "in_transit" as const,
      estimated_departure: "2026-01-01T01:00:00Z",
      estimated_arrival: "2026-01-01T02:00:00Z",
      actual_departure: "2026-01-01T01:00:00Z",
      actual_arrival: null,
      transporter: null,
      driver_name: "Driver One",
      vehicle_info: "White Van VIN123",
      facility_id,
      provider: "provider_b" as const,
      provider_transfer_id: "1000000000000501/1"
    }
    assert.deepStrictEqual(Normalize.normalizeSync.transfer(rows, o), expected)
    const inbound = [{ ...rows.outbound[0]!, transactionid: "9823", sessiontime: "1767236400", is_refund: "0" }]
    const received = Normalize.normalizeSync.transfer({ ...rows, inbound }, o)
    assert.strictEqual(received.status, "received")
    assert.strictEqual(received.actual_arrival, "2026-01-01T03:00:00Z")
    const refused = Normalize.normalizeSync.transfer({ ...rows, inbound: [{ ...inbound[0]!, is_refund: 1 }] }, o)
    assert.strictEqual(refused.status, "rejected")
    const pending = Normalize.normalizeSync.transfer(
      { ...rows, manifest: { ...rows.manifest, completion_date: null } },
      o
    )
    assert.strictEqual(pending.status, "pending")
    assert.isNull(pending.actual_departure)
  })

  it("sale: the lines of one transaction", () => {
    const line = (inventoryid: string, price: string, quantity: string, extra = {}) => ({
      inventoryid,
      price,
      quantity,
      location: "900101",
      sessiontime: "1767225600",
      transactionid: "4857",
      ...extra
    })
    assert.deepStrictEqual(
      Normalize.normalizeSync.sale({
        sale: [line("1000000000000010", "30.00", "2"), line("1000000000000099", "8.00", "1", { card_id: "PAT-1" })],
        inventory: [inventoryRow]
      }, o),
      {
        id: Ids.make("sale", "provider_b", "4857"),
        receipt_number: "4857",
        sale_date: "2026-01-01T00:00:00Z",
        customer_type: "Patient",
        patient_license: "PAT-1",
        caregiver_license: null,
        items: [
          {
            package_id: pkg("1000000000000010"),
            tag: "1000000000000010",
            item_name: "Preroll",
            quantity: 2,
            unit_of_measure: "Each",
            unit_price: 15,
            discount: 0,
            total: 30
          },
          {
            package_id: pkg("1000000000000099"),
            tag: "1000000000000099",
            item_name: "1000000000000099",
            quantity: 1,
            unit_of_measure: "Each",
            unit_price: 8,
            discount: 0,
            total: 8
          }
        ],
        total_price: 38,
        total_discount: 0,
        facility_id,
        provider: "provider_b",
        provider_sale_id: "4857"
      }
    )
  })

  it("item, strain and location: derived from the rows that use them", () => {
    assert.deepStrictEqual(
      Normalize.normalizeSync.item([inventoryRow, { ...inventoryRow, id: "1000000000000013" }], o),
      {
        id: Ids.make("item", "provider_b", "28:Preroll"),
        name: "Preroll",
        category: "Flower",
        strain: "Green Crack",
        unit_of_measure: "Each",
        unit_weight: 1,
        facility_id,
        provider: "provider_b",
        provider_item_id: "28:Preroll"
      }
    )
    assert.isNull(Normalize.normalizeSync.item([inventoryRow, { ...inventoryRow, strain: "Other" }], o).strain)
    assert.deepStrictEqual(Normalize.normalizeSync.strain({ strain: " Green Crack " }, o), {
      id: Ids.make("strain", "provider_b", "Green Crack"),
      name: "Green Crack",
      indica_percentage: null,
      sativa_percentage: null,
      genetics: null,
      facility_id,
      provider: "provider_b",
      provider_strain_id: "Green Crack"
    })
    assert.deepStrictEqual(
      Normalize.normalizeSync.location({
        kind: "inventory",
        room: { roomid: "1", name: "Quarantine", location: "900101", quarantine: "1", transactionid: "4032" }
      }, o),
      {
        id: Ids.make("location", "provider_b", "inventory:1"),
        name: "Quarantine",
        location_type: "Quarantine Room",
        facility_id,
        provider: "provider_b",
        provider_location_id: "inventory:1"
      }
    )
  })
})
