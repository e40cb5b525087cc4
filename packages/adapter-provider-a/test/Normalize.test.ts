/**
 * The embedding API, mapper by mapper: each fixture (written from the research payloads) maps to
 * exactly the expected core object.
 */
import { assert, describe, it } from "@effect/vitest"
import { normalize, normalizeSync } from "@tracebridge/adapter-provider-a"
import { Ids, Package } from "@tracebridge/core"
import { Effect, Schema } from "effect"
import { fixture } from "./support/fixtures.js"

const facility_id = Ids.make("facility", "provider_a", "CO-TEST-0001")
const ctx = { facility_id, state: "CO" }
const id = <K extends Ids.Kind>(kind: K, providerId: string) => Ids.make(kind, "provider_a", providerId)
const scoped = { facility_id, provider: "provider_a" as const }

describe("Normalize", () => {
  // fixtures/package.json and package-v1.json are the research's v2 and v1 package examples
  // (shared/research/provider-payloads/metrc-packages.json), with placeholder licences replaced.
  it("maps the v2 package example of the research to exactly the spec's fields", () => {
    const raw = fixture("package")
    const pkg = normalizeSync.package(raw, { facility_id })
    assert.deepStrictEqual(Object.keys(pkg).sort(), Object.keys(Package.Package.fields).sort())
    assert.isTrue(Schema.is(Package.Package)(pkg))
  })

  it("holds: an investigation, a recall or an administrative hold each count as is_on_hold (issue 17)", () => {
    const base = { ...fixture("package"), IsOnHold: false }
    const flags = [
      "IsOnHold",
      "IsOnHoldCombined",
      "IsOnInvestigation",
      "IsOnInvestigationHold",
      "IsOnInvestigationRecall",
      "IsOnRecall",
      "IsOnRecallCombined"
    ]
    const clear = Object.fromEntries(flags.map((f) => [f, false]))
    assert.isFalse(normalizeSync.package({ ...base, ...clear }, ctx).is_on_hold)
    for (const flag of flags) {
      assert.isTrue(normalizeSync.package({ ...base, ...clear, [flag]: true }, ctx).is_on_hold, flag)
    }
  })

  it("maps the v1 package example (flat product fields) as well", () => {
    const raw = fixture("package-v1")
    const pkg = normalizeSync.package(raw, { facility_id })
    assert.strictEqual(pkg.item_name, "Buds")
    assert.strictEqual(pkg.item_category, "Buds")
    assert.strictEqual(pkg.unit_of_measure, "Ounces")
    assert.isTrue(Schema.is(Package.Package)(pkg))
  })

  it("package", () => {
    assert.deepStrictEqual(
      normalizeSync.package({ ...fixture("package"), SourcePackageLabels: "A1,A2", ExpirationDate: "0001-01-01" }, ctx),
      {
        id: id("package", "ABCDEF012345670000010042"),
        tag: "ABCDEF012345670000010042",
        source_tag: "A1",
        item_name: "Buds",
        item_category: "Buds",
        item_strain: "Spring Hill Kush",
        quantity: 16,
        unit_of_measure: "Grams",
        lab_testing_state: "TestPassed",
        is_on_hold: false,
        packaged_date: "2014-11-29",
        expiration_date: null,
        ...scoped,
        provider_package_id: "2",
        source_harvest_ids: [],
        source_package_ids: [id("package", "A1"), id("package", "A2")],
        lab_results: [],
        metadata: {
          PackageType: "Product",
          LocationName: "Vault",
          LocationTypeName: "Default",
          OriginalPackageQuantity: 16,
          UnitOfMeasureAbbreviation: "g",
          ItemFromFacilityLicenseNumber: "CO-TEST-0003",
          ItemFromFacilityName: "Cultivation LLC",
          InitialLabTestingState: "NotSubmitted",
          LabTestingStateDate: "2014-12-02",
          IsProductionBatch: false,
          IsTradeSample: false,
          IsDonation: false,
          IsTestingSample: false,
          ProductRequiresRemediation: false,
          SourceHarvestNames: "2014-11-19-Harvest Location-M",
          IsFinished: false,
          LastModified: "2014-12-02T15:10:04+00:00",
          ItemId: 1
        }
      }
    )
  })

  it("facility", () => {
    const [first] = fixture("facilities")
    const facility = normalizeSync.facility(first, { state: "CO", today: "2026-03-15" })
    assert.deepStrictEqual({ ...facility, facility_type: null }, {
      id: facility_id,
      name: "Test Cultivation LLC",
      display_name: "Test Cultivation",
      alias: "Test Cultivation",
      license_number: "CO-TEST-0001",
      license_type: "Adult-Use Cultivation",
      license_start_date: "2024-01-01",
      license_end_date: "2027-12-31",
      address: null,
      city: null,
      zip: null,
      state: "CO",
      status: "active",
      credentialed_date: "2024-01-15",
      support_activation_date: null,
      support_expiration_date: null,
      provider: "provider_a",
      provider_facility_id: "CO-TEST-0001",
      user_permissions: { is_owner: false, is_manager: true, is_financial_contact: false, occupations: [] },
      capabilities: [
        "cultivation",
        "manufacturing",
        "harvests",
        "packages",
        "sales",
        "sales_deliveries",
        "transfers",
        "patients"
      ],
      facility_type: null
    })
    assert.strictEqual(facility.facility_type!.CanGrowPlants, true)
  })

  it("plant", () => {
    assert.deepStrictEqual(normalizeSync.plant(fixture("plant-vegetative"), ctx), {
      id: id("plant", "ABCDEF012345670000000024"),
      tag: "ABCDEF012345670000000024",
      strain_name: "Spring Hill Kush",
      growth_phase: "vegetative",
      plant_batch_id: "1",
      location: "Plants Location",
      planted_date: "2014-10-10",
      vegetative_date: "2014-10-20",
      flowering_date: null,
      harvest_date: null,
      ...scoped,
      provider_plant_id: "24"
    })
  })

  it("harvest", () => {
    assert.deepStrictEqual(
      normalizeSync.harvest({ ...fixture("harvest"), SourceStrainNames: "Spring Hill Kush" }, ctx),
      {
        id: id("harvest", "1"),
        harvest_name: "2014-11-19-Harvest Location-M",
        harvest_type: "Product",
        strain_name: "Spring Hill Kush",
        harvested_date: "2014-11-19",
        current_weight: 0,
        unit_of_measure: "Ounces",
        total_waste_weight: 0,
        plant_count: 70,
        source_plant_ids: [],
        ...scoped,
        provider_harvest_id: "1"
      }
    )
  })

  it("labResults groups one package's rows into results", () => {
    const row = fixture("labtest-row")
    const rows = [
      row,
      { ...row, TestTypeName: "THC", TestResultLevel: 22.1, TestPassed: true, TestComment: "" },
      {
        ...row,
        LabTestResultId: 2,
        TestTypeName: "Pesticides",
        TestPassed: false,
        OverallPassed: false,
        TestResultLevel: null
      }
    ]
    assert.deepStrictEqual(normalizeSync.labResults(rows, ctx), [
      {
        id: id("lab_result", "1"),
        package_id: id("package", "ABCDEF012345670000010042"),
        lab_name: "Test Analytical Labs LLC",
        lab_license: "CO-TESTLAB-0001",
        test_date: "2014-11-29",
        result_date: "2014-11-29",
        overall_passed: true,
        test_type: "ComplianceTesting",
        results: [
          {
            name: "Microbiologicals",
            category: "microbials",
            value: 0.1,
            unit: "CFU/g",
            passed: true,
            notes: "This is a comment."
          },
          { name: "THC", category: "potency", value: 22.1, unit: "%", passed: true, notes: null }
        ],
        ...scoped,
        provider_result_id: "1"
      },
      {
        id: id("lab_result", "2"),
        package_id: id("package", "ABCDEF012345670000010042"),
        lab_name: "Test Analytical Labs LLC",
        lab_license: "CO-TESTLAB-0001",
        test_date: "2014-11-29",
        result_date: "2014-11-29",
        overall_passed: false,
        test_type: "ComplianceTesting",
        results: [{
          name: "Pesticides",
          category: "pesticides",
          value: null,
          unit: "ppm",
          passed: false,
          notes: "This is a comment."
        }],
        ...scoped,
        provider_result_id: "2"
      }
    ])
  })

  it("transfer, with its delivery packages and local times in the state's zone", () => {
    const raw = { ...fixture("transfer-incoming"), Packages: [fixture("delivery-package")] }
    assert.deepStrictEqual(normalizeSync.transfer(raw, ctx), {
      id: id("transfer", "1"),
      manifest_number: "0000000001",
      transfer_type: "Transfer",
      shipper_facility: "CO-TEST-0003",
      recipient_facility: "CO-TEST-0003",
      packages: [{
        package_id: id("package", "ABCDEF012345670000010026"),
        tag: "ABCDEF012345670000010026",
        item_name: "Buds",
        quantity: 10,
        unit_of_measure: "Ounces"
      }],
      status: "received",
      estimated_departure: "2016-10-11T20:48:30.000Z",
      estimated_arrival: "2016-10-11T22:50:00.000Z",
      actual_departure: null,
      actual_arrival: null,
      transporter: "Lofty Med-Dispensary",
      driver_name: "X",
      vehicle_info: "X X X",
      ...scoped,
      provider_transfer_id: "1"
    })
    assert.strictEqual(normalizeSync.transfer(raw, { ...ctx, source: "rejected" }).status, "rejected")
    assert.strictEqual(normalizeSync.transfer({ ...raw, ReceivedDateTime: null }, ctx).status, "pending")
  })

  // Licence numbers of the research's payloads (metrc-transfers.json, metrc-facilities.json) come in
  // several shapes; a New Mexico-style prefix is one more. None may drop or alter a transfer (issue 17).
  it("transfer: licence numbers of every documented shape pass through, incoming and outgoing (issue 17)", () => {
    const shapes = ["123-ABC", "3a-X0001", "402-X0002", "NM-TEST-00001", "ABC-12345"]
    for (const license of shapes) {
      const here = { facility_id: Ids.make("facility", "provider_a", license), state: "CO" }
      const incoming = {
        ...fixture("transfer-incoming"),
        _source: "metrc-transfers.json GET /transfers/v2/incoming, placeholder licences",
        ShipperFacilityLicenseNumber: "4a-X0001",
        RecipientFacilityLicenseNumber: license
      }
      const t = normalizeSync.transfer(incoming, { ...here, source: "incoming" })
      assert.strictEqual(t.shipper_facility, "4a-X0001", license)
      assert.strictEqual(t.recipient_facility, license, license)
      assert.strictEqual(t.facility_id, here.facility_id)
      const outgoing = {
        ...fixture("transfer-incoming"),
        _source: "metrc-transfers.json GET /transfers/v2/outgoing, placeholder licences",
        ShipperFacilityLicenseNumber: license,
        RecipientFacilityLicenseNumber: "4a-X0001"
      }
      const o = normalizeSync.transfer(outgoing, { ...here, source: "outgoing" })
      assert.strictEqual(o.shipper_facility, license, license)
      assert.strictEqual(o.recipient_facility, "4a-X0001", license)
    }
  })

  it("sale", () => {
    const raw = {
      ...fixture("sales-receipt"),
      TotalPrice: 30,
      Transactions: [{
        PackageLabel: "ABCDEF012345670000010042",
        ProductName: "Buds",
        QuantitySold: 4,
        UnitOfMeasureName: "Grams",
        TotalPrice: 30
      }]
    }
    assert.deepStrictEqual(normalizeSync.sale(raw, ctx), {
      id: id("sale", "1"),
      receipt_number: "ABC-123",
      sale_date: "2016-01-02T00:35:45.000Z",
      customer_type: "Consumer",
      patient_license: null,
      caregiver_license: null,
      items: [{
        package_id: id("package", "ABCDEF012345670000010042"),
        tag: "ABCDEF012345670000010042",
        item_name: "Buds",
        quantity: 4,
        unit_of_measure: "Grams",
        unit_price: 7.5,
        discount: 0,
        total: 30
      }],
      total_price: 30,
      total_discount: 0,
      ...scoped,
      provider_sale_id: "1"
    })
  })

  it("salesDelivery", () => {
    assert.deepStrictEqual(normalizeSync.salesDelivery(fixture("sales-delivery"), ctx), {
      id: id("sales_delivery", "1"),
      recipient_name: null,
      recipient_city: "Denver",
      recipient_state: "CO",
      delivery_date: "2017-04-04T19:00:00.000Z",
      customer_type: "Consumer",
      patient_license: null,
      status: "Undesignated",
      items: [],
      ...scoped,
      provider_delivery_id: "1"
    })
  })

  it("item, strain, location and patient", () => {
    assert.deepStrictEqual(normalizeSync.item(fixture("item"), ctx), {
      id: id("item", "1"),
      name: "Buds",
      category: "Buds",
      strain: "Spring Hill Kush",
      unit_of_measure: "Ounces",
      unit_weight: null,
      ...scoped,
      provider_item_id: "1"
    })
    assert.deepStrictEqual(normalizeSync.strain(fixture("strain"), ctx), {
      id: id("strain", "201"),
      name: "Spring Hill Kush",
      indica_percentage: 60,
      sativa_percentage: 40,
      genetics: "60% Indica / 40% Sativa",
      ...scoped,
      provider_strain_id: "201"
    })
    assert.deepStrictEqual(normalizeSync.location(fixture("location"), ctx), {
      id: id("location", "1"),
      name: "Harvest Location",
      location_type: "Default",
      ...scoped,
      provider_location_id: "1"
    })
    assert.deepStrictEqual(normalizeSync.patient(fixture("patient"), ctx), {
      id: id("patient", "1"),
      patient_license_number: "000001",
      license_effective_start_date: "2014-07-12",
      license_effective_end_date: "2015-07-07",
      recommended_plants_count: 6,
      recommended_smokable_quantity: 2,
      has_sales_limit_exemption: false,
      ...scoped,
      provider_patient_id: "1"
    })
  })

  it("reads keys in any case", () => {
    const camel = Object.fromEntries(
      Object.entries(fixture("location")).map(([k, v]) => [k[0]!.toLowerCase() + k.slice(1), v])
    )
    assert.deepStrictEqual(normalizeSync.location(camel, ctx), normalizeSync.location(fixture("location"), ctx))
  })

  it.effect("throws ProviderInvalidResponse naming the field, or fails the Effect form with it", () =>
    Effect.gen(function*() {
      assert.throws(() => normalizeSync.package({ ...fixture("package"), Quantity: "16" }, ctx), /Quantity/)
      const error = yield* Effect.flip(normalize.package({ ...fixture("package"), PackagedDate: "yesterday" }, ctx))
      assert.strictEqual(error._tag, "ProviderInvalidResponse")
      assert.strictEqual(error.path, "PackagedDate")
      const noItem = yield* Effect.flip(normalize.package({ ...fixture("package"), Item: null }, ctx))
      assert.strictEqual(noItem.path, "Item.Name")
    }))
})
