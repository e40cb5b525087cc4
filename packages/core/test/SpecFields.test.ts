/**
 * The spec's §2 tables, transcribed field by field, against the core schemas: the field set must
 * be equal (adding or dropping a field fails), nullability must match, and each field must refuse
 * a value of the wrong type. DECISIONS adds `facility_id` to LabResult and Transfer.
 */
import { assert, describe, it } from "@effect/vitest"
import {
  Capabilities,
  Connection,
  Facility,
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Patient,
  Plant,
  Sale,
  SalesDelivery,
  Strain,
  Transfer
} from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as samples from "./support/samples.js"

type Kind = "string" | "number" | "boolean" | "array" | "object" | "date" | "datetime" | "enum"
// "kind?" = nullable
type Table = Record<string, `${Kind}` | `${Kind}?`>

const scoped = (providerId: string): Table => ({
  facility_id: "string",
  provider: "enum",
  [providerId]: "string"
})

const spec: ReadonlyArray<
  {
    name: string
    schema: Schema.Schema<any, any, never> & { readonly fields: Schema.Struct.Fields }
    sample: object
    table: Table
  }
> = [
  {
    name: "Connection",
    schema: Connection.Connection,
    sample: samples.connection,
    table: {
      id: "string",
      external_id: "string?",
      provider: "enum",
      state: "enum",
      status: "enum",
      is_sandbox: "boolean",
      capabilities: "object"
    }
  },
  {
    name: "Facility",
    schema: Facility.Facility,
    sample: samples.facility,
    table: {
      id: "string",
      name: "string",
      display_name: "string?",
      alias: "string?",
      license_number: "string",
      license_type: "string",
      license_start_date: "date?",
      license_end_date: "date?",
      address: "string?",
      city: "string?",
      zip: "string?",
      state: "enum",
      status: "enum",
      credentialed_date: "date?",
      support_activation_date: "date?",
      support_expiration_date: "date?",
      provider: "enum",
      provider_facility_id: "string",
      user_permissions: "object?",
      capabilities: "array",
      facility_type: "object?"
    }
  },
  {
    name: "UserPermissions",
    schema: Facility.UserPermissions,
    sample: samples.facility.user_permissions!,
    table: { is_owner: "boolean", is_manager: "boolean", is_financial_contact: "boolean", occupations: "array" }
  },
  {
    name: "Package",
    schema: Package.Package,
    sample: samples.pkg,
    table: {
      id: "string",
      tag: "string",
      source_tag: "string?",
      item_name: "string",
      item_category: "string",
      item_strain: "string?",
      quantity: "number",
      unit_of_measure: "string",
      lab_testing_state: "string?",
      is_on_hold: "boolean",
      packaged_date: "date?",
      expiration_date: "date?",
      ...scoped("provider_package_id"),
      source_harvest_ids: "array",
      source_package_ids: "array",
      lab_results: "array",
      metadata: "object"
    }
  },
  {
    name: "LabResult",
    schema: LabResult.LabResult,
    sample: samples.labResult,
    table: {
      id: "string",
      package_id: "string",
      lab_name: "string",
      lab_license: "string?",
      test_date: "date?",
      result_date: "date?",
      overall_passed: "boolean",
      test_type: "string",
      results: "array",
      ...scoped("provider_result_id")
    }
  },
  {
    name: "LabTestResult",
    schema: LabResult.LabTestResult,
    sample: samples.labResult.results[0]!,
    table: {
      name: "string",
      category: "string",
      value: "number?",
      unit: "string?",
      passed: "boolean",
      notes: "string?"
    }
  },
  {
    name: "Plant",
    schema: Plant.Plant,
    sample: samples.plant,
    table: {
      id: "string",
      tag: "string",
      strain_name: "string",
      growth_phase: "enum",
      plant_batch_id: "string?",
      location: "string?",
      planted_date: "date?",
      vegetative_date: "date?",
      flowering_date: "date?",
      harvest_date: "date?",
      ...scoped("provider_plant_id")
    }
  },
  {
    name: "Harvest",
    schema: Harvest.Harvest,
    sample: samples.harvest,
    table: {
      id: "string",
      harvest_name: "string",
      harvest_type: "string",
      strain_name: "string",
      harvested_date: "date",
      current_weight: "number",
      unit_of_measure: "string",
      total_waste_weight: "number",
      plant_count: "number",
      source_plant_ids: "array",
      ...scoped("provider_harvest_id")
    }
  },
  {
    name: "Transfer",
    schema: Transfer.Transfer,
    sample: samples.transfer,
    table: {
      id: "string",
      manifest_number: "string",
      transfer_type: "string",
      shipper_facility: "string",
      recipient_facility: "string",
      packages: "array",
      status: "enum",
      estimated_departure: "datetime?",
      estimated_arrival: "datetime?",
      actual_departure: "datetime?",
      actual_arrival: "datetime?",
      transporter: "string?",
      driver_name: "string?",
      vehicle_info: "string?",
      ...scoped("provider_transfer_id")
    }
  },
  {
    name: "TransferPackage",
    schema: Transfer.TransferPackage,
    sample: samples.transfer.packages[0]!,
    table: { package_id: "string", tag: "string", item_name: "string", quantity: "number", unit_of_measure: "string" }
  },
  {
    name: "Sale",
    schema: Sale.Sale,
    sample: samples.sale,
    table: {
      id: "string",
      receipt_number: "string",
      sale_date: "datetime",
      customer_type: "string",
      patient_license: "string?",
      caregiver_license: "string?",
      items: "array",
      total_price: "number",
      total_discount: "number",
      ...scoped("provider_sale_id")
    }
  },
  {
    name: "SaleItem",
    schema: Sale.SaleItem,
    sample: samples.sale.items[0]!,
    table: {
      package_id: "string",
      tag: "string",
      item_name: "string",
      quantity: "number",
      unit_of_measure: "string",
      unit_price: "number",
      discount: "number",
      total: "number"
    }
  },
  {
    name: "SalesDelivery",
    schema: SalesDelivery.SalesDelivery,
    sample: samples.salesDelivery,
    table: {
      id: "string",
      recipient_name: "string?",
      recipient_city: "string?",
      recipient_state: "string?",
      delivery_date: "datetime?",
      customer_type: "string",
      patient_license: "string?",
      status: "string?",
      items: "array",
      ...scoped("provider_delivery_id")
    }
  },
  {
    name: "SalesDeliveryItem",
    schema: SalesDelivery.SalesDeliveryItem,
    sample: samples.salesDelivery.items[0]!,
    table: { package_id: "string", item_name: "string", unit_of_measure: "string", quantity: "number" }
  },
  {
    name: "Item",
    schema: Item.Item,
    sample: samples.item,
    table: {
      id: "string",
      name: "string",
      category: "string",
      strain: "string?",
      unit_of_measure: "string",
      unit_weight: "number?",
      ...scoped("provider_item_id")
    }
  },
  {
    name: "Strain",
    schema: Strain.Strain,
    sample: samples.strain,
    table: {
      id: "string",
      name: "string",
      indica_percentage: "number?",
      sativa_percentage: "number?",
      genetics: "string?",
      ...scoped("provider_strain_id")
    }
  },
  {
    name: "Location",
    schema: Location.Location,
    sample: samples.location,
    table: { id: "string", name: "string", location_type: "string?", ...scoped("provider_location_id") }
  },
  {
    name: "Patient",
    schema: Patient.Patient,
    sample: samples.patient,
    table: {
      id: "string",
      patient_license_number: "string?",
      license_effective_start_date: "date?",
      license_effective_end_date: "date?",
      recommended_plants_count: "number?",
      recommended_smokable_quantity: "number?",
      has_sales_limit_exemption: "boolean",
      ...scoped("provider_patient_id")
    }
  }
]

const wrongValue: Record<Kind, unknown> = {
  string: 42,
  number: "42",
  boolean: "true",
  array: "not-an-array",
  object: "not-an-object",
  date: "2026-02-30",
  datetime: "2026-02-10T09:00:00",
  enum: "not_a_member"
}

const valid = (schema: Schema.Schema<any, any>, value: unknown) =>
  Either.isRight(Schema.validateEither(schema, { onExcessProperty: "error" })(value))

describe("spec §2 field sets", () => {
  it("covers every object type of spec §2", () => {
    assert.deepStrictEqual(
      spec.map((s) => s.name).sort(),
      [
        "Connection",
        "Facility",
        "Harvest",
        "Item",
        "LabResult",
        "LabTestResult",
        "Location",
        "Package",
        "Patient",
        "Plant",
        "Sale",
        "SaleItem",
        "SalesDelivery",
        "SalesDeliveryItem",
        "Strain",
        "Transfer",
        "TransferPackage",
        "UserPermissions"
      ]
    )
  })

  for (const { name, sample, schema, table } of spec) {
    describe(name, () => {
      it("has exactly the spec's fields", () => {
        assert.deepStrictEqual(Object.keys(schema.fields).sort(), Object.keys(table).sort())
      })

      it("accepts the sample and refuses an extra field", () => {
        assert.isTrue(valid(schema, sample))
        assert.isFalse(valid(schema, { ...sample, unexpected_field: 1 }))
      })

      it("refuses a missing field", () => {
        for (const field of Object.keys(table)) {
          const { [field]: _dropped, ...rest } = sample as Record<string, unknown>
          assert.isFalse(valid(schema, rest), `${name} without ${field}`)
        }
      })

      it("takes null exactly where the spec says nullable", () => {
        for (const [field, kind] of Object.entries(table)) {
          assert.strictEqual(valid(schema, { ...sample, [field]: null }), kind.endsWith("?"), `${name}.${field} = null`)
        }
      })

      it("refuses a value of the wrong type in every field", () => {
        for (const [field, kind] of Object.entries(table)) {
          const base = kind.replace("?", "") as Kind
          assert.isFalse(
            valid(schema, { ...sample, [field]: wrongValue[base] }),
            `${name}.${field} = ${String(wrongValue[base])}`
          )
        }
      })
    })
  }

  it("keeps the spec's capability flags, plus exactly the documented extras", () => {
    const specFlags = [
      "plant_batches",
      "mother_plants",
      "vegetative",
      "flowering",
      "harvests",
      "packages",
      "items",
      "strains",
      "labs",
      "sales",
      "sales_deliveries"
    ]
    const extras = ["transfers", "patients", "locations"]
    assert.deepStrictEqual([...Capabilities.flags], [...specFlags, ...extras])
    for (const flag of Capabilities.flags) {
      assert.isFalse(valid(Capabilities.Capabilities, { ...samples.capabilities, [flag]: "yes" }), flag)
    }
  })

  it("uses the spec's enum values", () => {
    assert.deepStrictEqual(Connection.ConnectionStatus.literals, ["active", "inactive", "error", "pending"])
    assert.deepStrictEqual(Facility.FacilityStatus.literals, ["active", "inactive"])
    assert.deepStrictEqual(Plant.GrowthPhase.literals, ["clone", "vegetative", "flowering"])
    assert.deepStrictEqual(Transfer.TransferStatus.literals, ["pending", "in_transit", "received", "rejected"])
  })
})
