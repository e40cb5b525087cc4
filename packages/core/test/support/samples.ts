/**
 * Valid, synthetic core objects (no real licence numbers), built through the public id helpers.
 */
import { Capabilities, Ids } from "@tracebridge/core"
import type {
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

export const provider = "provider_a" as const
export const facilityId = Ids.make("facility", provider, "TEST-LIC-0001")

export const capabilities = Capabilities.make(true, { sales_deliveries: false })

export const connection: Connection.Connection = {
  id: "conn_test_1" as Connection.Connection["id"],
  external_id: null,
  provider,
  state: "CO",
  status: "active",
  is_sandbox: true,
  capabilities
}

export const facility: Facility.Facility = {
  id: facilityId,
  name: "Green Test Cultivation LLC",
  display_name: "Green Test",
  alias: null,
  license_number: "TEST-LIC-0001",
  license_type: "Medical Cultivation",
  license_start_date: "2024-01-01",
  license_end_date: "2027-01-01",
  address: null,
  city: null,
  zip: null,
  state: "CO",
  status: "active",
  credentialed_date: "2024-01-15",
  support_activation_date: null,
  support_expiration_date: null,
  provider,
  provider_facility_id: "TEST-LIC-0001",
  user_permissions: { is_owner: true, is_manager: false, is_financial_contact: false, occupations: ["Grower"] },
  capabilities: ["cultivation", "packages"],
  facility_type: { CanGrowPlants: true }
}

export const labResult: LabResult.LabResult = {
  id: Ids.make("lab_result", provider, "900"),
  package_id: Ids.make("package", provider, "100"),
  lab_name: "Test Labs Inc",
  lab_license: "TEST-LAB-0001",
  test_date: "2026-02-01",
  result_date: "2026-02-03",
  overall_passed: true,
  test_type: "ComplianceTesting",
  results: [{ name: "THC", category: "potency", value: 21.4, unit: "%", passed: true, notes: null }],
  facility_id: facilityId,
  provider,
  provider_result_id: "900"
}

export const pkg: Package.Package = {
  id: Ids.make("package", provider, "100"),
  tag: "1A4FF0000000000000000100",
  source_tag: null,
  item_name: "Blue Dream Buds",
  item_category: "Flower",
  item_strain: "Blue Dream",
  quantity: 100,
  unit_of_measure: "Grams",
  lab_testing_state: "TestPassed",
  is_on_hold: false,
  packaged_date: "2026-01-20",
  expiration_date: null,
  facility_id: facilityId,
  provider,
  provider_package_id: "100",
  source_harvest_ids: [Ids.make("harvest", provider, "50")],
  source_package_ids: [],
  lab_results: [labResult],
  metadata: { PackageType: "Product" }
}

export const plant: Plant.Plant = {
  id: Ids.make("plant", provider, "10"),
  tag: "1A4FF0000000000000000010",
  strain_name: "Blue Dream",
  growth_phase: "flowering",
  plant_batch_id: null,
  location: "Flower Room 1",
  planted_date: "2025-10-01",
  vegetative_date: "2025-10-20",
  flowering_date: "2025-11-20",
  harvest_date: "2026-01-10",
  facility_id: facilityId,
  provider,
  provider_plant_id: "10"
}

export const harvest: Harvest.Harvest = {
  id: Ids.make("harvest", provider, "50"),
  harvest_name: "2026-01-10 Blue Dream",
  harvest_type: "WholePlant",
  strain_name: "Blue Dream",
  harvested_date: "2026-01-10",
  current_weight: 900,
  unit_of_measure: "Grams",
  total_waste_weight: 120,
  plant_count: 1,
  source_plant_ids: [plant.id],
  facility_id: facilityId,
  provider,
  provider_harvest_id: "50"
}

export const transfer: Transfer.Transfer = {
  id: Ids.make("transfer", provider, "300"),
  manifest_number: "0000000300",
  transfer_type: "Transfer",
  shipper_facility: "TEST-LIC-0001",
  recipient_facility: "TEST-LIC-0002",
  packages: [{ package_id: pkg.id, tag: pkg.tag, item_name: pkg.item_name, quantity: 10, unit_of_measure: "Grams" }],
  status: "in_transit",
  estimated_departure: "2026-02-10T09:00:00Z",
  estimated_arrival: "2026-02-10T15:00:00-07:00",
  actual_departure: "2026-02-10T09:05:00Z",
  actual_arrival: null,
  transporter: "Test Transport LLC",
  driver_name: "Sam Driver",
  vehicle_info: "Ford Transit TEST-123",
  facility_id: facilityId,
  provider,
  provider_transfer_id: "300"
}

export const sale: Sale.Sale = {
  id: Ids.make("sale", provider, "700"),
  receipt_number: "R-700",
  sale_date: "2026-03-01T17:35:45Z",
  customer_type: "Consumer",
  patient_license: null,
  caregiver_license: null,
  items: [{
    package_id: pkg.id,
    tag: pkg.tag,
    item_name: pkg.item_name,
    quantity: 3.5,
    unit_of_measure: "Grams",
    unit_price: 10,
    discount: 5,
    total: 30
  }],
  total_price: 35,
  total_discount: 5,
  facility_id: facilityId,
  provider,
  provider_sale_id: "700"
}

export const salesDelivery: SalesDelivery.SalesDelivery = {
  id: Ids.make("sales_delivery", provider, "800"),
  recipient_name: "Pat Recipient",
  recipient_city: "Denver",
  recipient_state: "CO",
  delivery_date: "2026-03-02T12:00:00Z",
  customer_type: "Consumer",
  patient_license: null,
  status: "Delivered",
  items: [{ package_id: pkg.id, item_name: pkg.item_name, unit_of_measure: "Grams", quantity: 3.5 }],
  facility_id: facilityId,
  provider,
  provider_delivery_id: "800"
}

export const item: Item.Item = {
  id: Ids.make("item", provider, "20"),
  name: "Blue Dream Buds",
  category: "Flower",
  strain: "Blue Dream",
  unit_of_measure: "Grams",
  unit_weight: null,
  facility_id: facilityId,
  provider,
  provider_item_id: "20"
}

export const strain: Strain.Strain = {
  id: Ids.make("strain", provider, "30"),
  name: "Blue Dream",
  indica_percentage: 40,
  sativa_percentage: 60,
  genetics: "40% Indica / 60% Sativa",
  facility_id: facilityId,
  provider,
  provider_strain_id: "30"
}

export const location: Location.Location = {
  id: Ids.make("location", provider, "40"),
  name: "Vault",
  location_type: "Default",
  facility_id: facilityId,
  provider,
  provider_location_id: "40"
}

export const patient: Patient.Patient = {
  id: Ids.make("patient", provider, "60"),
  patient_license_number: "TEST-PT-0001",
  license_effective_start_date: "2026-01-01",
  license_effective_end_date: "2027-01-01",
  recommended_plants_count: 6,
  recommended_smokable_quantity: 56.7,
  has_sales_limit_exemption: false,
  facility_id: facilityId,
  provider,
  provider_patient_id: "60"
}
