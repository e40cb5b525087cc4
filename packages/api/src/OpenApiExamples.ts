/**
 * An example for every operation of the OpenAPI document, by `operationId`: the success body in the
 * envelope the API sends (`responses`) and the JSON request body of every operation that takes one
 * (`requests`). The examples tell one story on one sandbox connection (of the catalog's first
 * provider, in Colorado where it serves it):
 * a cultivation facility splits a package off a tested harvest package, records a lab result on it,
 * ships it to its dispensary, and sells from it. Ids are made as the API makes them; licence numbers,
 * tags and names are fictitious; secrets are placeholders (`tb_secret_…`). Values are fixed, so the
 * document is the same on every build. They are written against core's schemas and the provider
 * catalog's descriptors alone: nothing here runs the sandbox (ADR 0022).
 *
 * @since 0.1.0
 */
import type {
  ChainOfCustody,
  Change,
  Commands,
  Connection,
  Envelope,
  Facility,
  Fault,
  Harvest,
  Item,
  LabResult,
  Location,
  Package,
  Patient,
  Plant,
  ProviderName,
  Sale,
  SalesDelivery,
  Strain,
  Transfer
} from "@tracebridge/core"
import { Ids, Page, ProviderDescriptor, ProviderModule, WebhookEvent } from "@tracebridge/core"
import { Catalog } from "@tracebridge/providers"
import type * as Events from "./groups/EventsApi.js"
import type * as Sandbox from "./groups/SandboxApi.js"
import type * as Schemas from "./groups/Schemas.js"
import type * as Webhooks from "./groups/WebhooksApi.js"

// ---------------------------------------------------------------------------------------------
// The envelope
// ---------------------------------------------------------------------------------------------

/** The examples' provider: the catalog's first (the document names none of its own). */
const DESCRIPTOR = Catalog.modules[0]!.descriptor
const PROVIDER = DESCRIPTOR.name
/** Colorado where the provider serves it, else its first state. */
const STATE: ProviderName.UsState = ProviderDescriptor.states(DESCRIPTOR).includes("CO")
  ? "CO"
  : ProviderDescriptor.states(DESCRIPTOR)[0]!

const REQUEST_ID = "req_4c7e1a9f2b3d5e6f7a8b9c0d"
const NOW = "2026-03-14T16:20:05.000Z"

/** `meta.provider` and `meta.state`: on every answer about one connection. */
const ON_CONNECTION = { provider: PROVIDER, state: STATE } as const

interface One<A> {
  readonly data: A
  readonly meta: typeof Envelope.Meta.Encoded
}

interface List<A> {
  readonly data: ReadonlyArray<A>
  readonly meta: typeof Envelope.ListMeta.Encoded
  readonly pagination: typeof Page.Pagination.Encoded
}

/** The envelope around one object. */
const one = <A>(data: A, scope: Partial<typeof ON_CONNECTION> = {}): One<A> => ({
  data,
  meta: { request_id: REQUEST_ID, timestamp: NOW, ...scope }
})

/** The envelope around the first (and only) page of a list, nothing skipped. */
const list = <A>(data: ReadonlyArray<A>, scope: Partial<typeof ON_CONNECTION> = {}): List<A> => ({
  data,
  meta: { request_id: REQUEST_ID, timestamp: NOW, ...scope, skipped: [] },
  pagination: { page: 1, per_page: Page.DEFAULT_PER_PAGE, total: data.length, total_pages: 1 }
})

// ---------------------------------------------------------------------------------------------
// Credentials and the connection
// ---------------------------------------------------------------------------------------------

const CLIENT_ID = "tb_client_0123456789abcdef0123456789abcdef"
const CONNECTION_ID = "conn_5e8b2f0c7a4d4b1e9c3f6a2d8e0b7c41"
const EXTERNAL_ID = "store-0042"
const CLIENT_STATE = "session-7d41"
const PUBLIC_TOKEN = "public-sandbox-…"

const connection: typeof Connection.Connection.Encoded = {
  id: CONNECTION_ID,
  external_id: EXTERNAL_ID,
  provider: PROVIDER,
  state: STATE,
  status: "active",
  is_sandbox: true,
  capabilities: {
    plant_batches: true,
    mother_plants: true,
    vegetative: true,
    flowering: true,
    harvests: true,
    packages: true,
    items: true,
    strains: true,
    labs: true,
    sales: true,
    sales_deliveries: true,
    transfers: true,
    patients: true,
    locations: true
  }
}

// ---------------------------------------------------------------------------------------------
// Facilities (licence numbers in the sandbox's SBX- form)
// ---------------------------------------------------------------------------------------------

const LICENSE = { cultivation: "SBX-10042-1", lab: "SBX-10042-3", retail: "SBX-10042-4" } as const
const id = <K extends Ids.Kind>(kind: K, providerId: string): string => Ids.make(kind, PROVIDER, providerId)
const FACILITY_ID = id("facility", LICENSE.cultivation)
const LAB_FACILITY_ID = id("facility", LICENSE.lab)
const RETAIL_FACILITY_ID = id("facility", LICENSE.retail)

const facility: typeof Facility.Facility.Encoded = {
  id: FACILITY_ID,
  name: "Example Valley Farms Cultivation",
  display_name: "Example Valley Farms",
  alias: "Example Valley Farms (cultivation)",
  license_number: LICENSE.cultivation,
  license_type: "Cultivation",
  license_start_date: "2025-07-01",
  license_end_date: "2026-06-30",
  address: "100 Example Way",
  city: "Denver",
  zip: "80216",
  state: STATE,
  status: "active",
  credentialed_date: "2025-07-02",
  support_activation_date: null,
  support_expiration_date: null,
  provider: PROVIDER,
  provider_facility_id: LICENSE.cultivation,
  user_permissions: { is_owner: true, is_manager: true, is_financial_contact: true, occupations: [] },
  capabilities: ["cultivation", "manufacturing", "harvests", "packages", "transfers"],
  facility_type: {
    IsMedical: false,
    IsRetail: false,
    CanGrowPlants: true,
    CanCreateDerivedPackages: true,
    CanTestPackages: false,
    CanSellToConsumers: false
  }
}

const labFacility: typeof Facility.Facility.Encoded = {
  ...facility,
  id: LAB_FACILITY_ID,
  name: "Example Analytical Testing Laboratory",
  display_name: "Example Analytical",
  alias: "Example Analytical (testing laboratory)",
  license_number: LICENSE.lab,
  license_type: "Testing Laboratory",
  address: "200 Example Way",
  provider_facility_id: LICENSE.lab,
  user_permissions: { is_owner: false, is_manager: true, is_financial_contact: false, occupations: [] },
  capabilities: ["testing", "labs"],
  facility_type: { IsMedical: false, IsRetail: false, CanGrowPlants: false, CanTestPackages: true }
}

const retailFacility: typeof Facility.Facility.Encoded = {
  ...facility,
  id: RETAIL_FACILITY_ID,
  name: "Example Valley Dispensary",
  display_name: "Example Valley Dispensary",
  alias: "Example Valley Farms (retail)",
  license_number: LICENSE.retail,
  license_type: "Adult-Use Retail",
  address: "300 Example Way",
  provider_facility_id: LICENSE.retail,
  capabilities: ["packages", "sales", "sales_deliveries", "transfers", "patients"],
  facility_type: { IsMedical: true, IsRetail: true, CanGrowPlants: false, CanSellToConsumers: true }
}

const scoped = { facility_id: FACILITY_ID, provider: PROVIDER } as const

// ---------------------------------------------------------------------------------------------
// Plants, the harvest and the reference data
// ---------------------------------------------------------------------------------------------

const TAG = {
  source: "1A4000000000000000000123",
  split: "1A4000000000000000000124",
  plants: ["1A4000000000000000000201", "1A4000000000000000000202", "1A4000000000000000000203"]
} as const

const harvestedPlant = (tag: string, providerId: string): typeof Plant.Plant.Encoded => ({
  id: id("plant", tag),
  tag,
  strain_name: "Blue Dream",
  growth_phase: "flowering",
  plant_batch_id: "900000012",
  location: "Flower Room 1",
  planted_date: "2025-10-06",
  vegetative_date: "2025-10-27",
  flowering_date: "2025-12-08",
  harvest_date: "2026-01-20",
  ...scoped,
  provider_plant_id: providerId
})

const harvestedPlants = [harvestedPlant(TAG.plants[0], "200000201"), harvestedPlant(TAG.plants[1], "200000202")]

const plant: typeof Plant.Plant.Encoded = {
  ...harvestedPlant(TAG.plants[2], "200000203"),
  growth_phase: "vegetative",
  location: "Veg Room 2",
  planted_date: "2026-02-09",
  vegetative_date: "2026-03-02",
  flowering_date: null,
  harvest_date: null
}

const harvest: typeof Harvest.Harvest.Encoded = {
  id: id("harvest", "300000017"),
  harvest_name: "2026-01-20-Blue Dream-1",
  harvest_type: "WholePlant",
  strain_name: "Blue Dream",
  harvested_date: "2026-01-20",
  current_weight: 1360.8,
  unit_of_measure: "Grams",
  total_waste_weight: 210.4,
  plant_count: 2,
  source_plant_ids: harvestedPlants.map((p) => p.id),
  ...scoped,
  provider_harvest_id: "300000017"
}

const item: typeof Item.Item.Encoded = {
  id: id("item", "800000011"),
  name: "Blue Dream Buds",
  category: "Flower",
  strain: "Blue Dream",
  unit_of_measure: "Grams",
  unit_weight: null,
  ...scoped,
  provider_item_id: "800000011"
}

const strain: typeof Strain.Strain.Encoded = {
  id: id("strain", "100000007"),
  name: "Blue Dream",
  indica_percentage: 20,
  sativa_percentage: 80,
  genetics: "20% Indica / 80% Sativa",
  ...scoped,
  provider_strain_id: "100000007"
}

const location: typeof Location.Location.Encoded = {
  id: id("location", "200000003"),
  name: "Vault",
  location_type: "Default",
  ...scoped,
  provider_location_id: "200000003"
}

// ---------------------------------------------------------------------------------------------
// Packages and their lab results
// ---------------------------------------------------------------------------------------------

const SOURCE_PACKAGE_ID = id("package", TAG.source)
const SPLIT_PACKAGE_ID = id("package", TAG.split)

const panel: ReadonlyArray<typeof LabResult.LabTestResult.Encoded> = [
  { name: "THC", category: "potency", value: 21.4, unit: "%", passed: true, notes: null },
  { name: "CBD", category: "potency", value: 0.3, unit: "%", passed: true, notes: null },
  { name: "Moisture", category: "moisture", value: 11.2, unit: "%", passed: true, notes: null },
  { name: "Microbiologicals", category: "microbials", value: 120, unit: "CFU/g", passed: true, notes: null },
  { name: "Pesticides", category: "pesticides", value: 0.012, unit: "ppm", passed: true, notes: null },
  { name: "Heavy Metals", category: "heavy_metals", value: 0.08, unit: "ppm", passed: true, notes: null }
]

const labResult: typeof LabResult.LabResult.Encoded = {
  id: id("lab_result", "400000077"),
  package_id: SOURCE_PACKAGE_ID,
  lab_name: labFacility.name,
  lab_license: LICENSE.lab,
  test_date: "2026-02-10",
  result_date: "2026-02-12",
  overall_passed: true,
  test_type: "ComplianceTesting",
  results: panel,
  ...scoped,
  provider_result_id: "400000077"
}

const recordLabResult: typeof Commands.RecordLabResult.Encoded = {
  package_id: SPLIT_PACKAGE_ID,
  lab_name: labFacility.name,
  lab_license: LICENSE.lab,
  test_type: "ComplianceTesting",
  test_date: "2026-03-14",
  overall_passed: true,
  results: [
    { name: "THC", category: "potency", value: 21.1, unit: "%", passed: true, notes: null },
    { name: "CBD", category: "potency", value: 0.3, unit: "%", passed: true, notes: null },
    { name: "Moisture", category: "moisture", value: 10.9, unit: "%", passed: true, notes: "Retest after curing" }
  ]
}

const recordedLabResult: typeof LabResult.LabResult.Encoded = {
  id: id("lab_result", "400000078"),
  package_id: SPLIT_PACKAGE_ID,
  lab_name: recordLabResult.lab_name,
  lab_license: LICENSE.lab,
  test_date: "2026-03-14",
  result_date: "2026-03-14",
  overall_passed: true,
  test_type: "ComplianceTesting",
  results: recordLabResult.results,
  facility_id: LAB_FACILITY_ID,
  provider: PROVIDER,
  provider_result_id: "400000078"
}

const sourcePackage: typeof Package.Package.Encoded = {
  id: SOURCE_PACKAGE_ID,
  tag: TAG.source,
  source_tag: null,
  item_name: "Blue Dream Buds",
  item_category: "Flower",
  item_strain: "Blue Dream",
  quantity: 425.6,
  unit_of_measure: "Grams",
  lab_testing_state: "TestPassed",
  is_on_hold: false,
  packaged_date: "2026-02-03",
  expiration_date: null,
  ...scoped,
  provider_package_id: "100000123",
  source_harvest_ids: [harvest.id],
  source_package_ids: [],
  lab_results: [labResult],
  metadata: {
    PackageType: "Product",
    LocationName: "Vault",
    UnitOfMeasureAbbreviation: "g",
    SourceHarvestNames: harvest.harvest_name,
    IsFinished: false,
    LastModified: "2026-03-14T15:58:12+00:00"
  }
}

const splitPackage: typeof Commands.SplitPackage.Encoded = {
  item_name: "Blue Dream Buds",
  item_category: "Flower",
  item_strain: "Blue Dream",
  quantity: 28,
  unit_of_measure: "Grams",
  source_package_ids: [SOURCE_PACKAGE_ID]
}

const newPackage: typeof Package.Package.Encoded = {
  ...sourcePackage,
  id: SPLIT_PACKAGE_ID,
  tag: TAG.split,
  source_tag: TAG.source,
  quantity: 28,
  packaged_date: "2026-03-14",
  provider_package_id: "100000124",
  source_package_ids: [SOURCE_PACKAGE_ID],
  lab_results: [],
  metadata: {
    PackageType: "Product",
    LocationName: "Vault",
    UnitOfMeasureAbbreviation: "g",
    SourceHarvestNames: harvest.harvest_name,
    SourcePackageLabels: TAG.source,
    IsFinished: false,
    LastModified: "2026-03-14T16:20:04+00:00"
  }
}

// ---------------------------------------------------------------------------------------------
// The transfer to the dispensary, the sale and its delivery, a patient
// ---------------------------------------------------------------------------------------------

const createTransfer: typeof Commands.CreateTransfer.Encoded = {
  transfer_type: "Transfer",
  shipper_facility: LICENSE.cultivation,
  recipient_facility: LICENSE.retail,
  packages: [
    {
      package_id: SPLIT_PACKAGE_ID,
      tag: TAG.split,
      item_name: "Blue Dream Buds",
      quantity: 28,
      unit_of_measure: "Grams"
    }
  ],
  estimated_departure: "2026-03-14T17:00:00.000Z",
  estimated_arrival: "2026-03-14T19:30:00.000Z",
  transporter: "Example Secure Transport",
  driver_name: "Alex Example",
  vehicle_info: "White Ford Transit, plate SBX-0042"
}

const newTransfer: typeof Transfer.Transfer.Encoded = {
  id: id("transfer", "500000042"),
  manifest_number: "0500000042",
  transfer_type: createTransfer.transfer_type,
  shipper_facility: createTransfer.shipper_facility,
  recipient_facility: createTransfer.recipient_facility,
  packages: createTransfer.packages,
  status: "pending",
  estimated_departure: "2026-03-14T17:00:00.000Z",
  estimated_arrival: "2026-03-14T19:30:00.000Z",
  actual_departure: null,
  actual_arrival: null,
  transporter: "Example Secure Transport",
  driver_name: "Alex Example",
  vehicle_info: "White Ford Transit, plate SBX-0042",
  ...scoped,
  provider_transfer_id: "500000042"
}

const transfer: typeof Transfer.Transfer.Encoded = {
  ...newTransfer,
  status: "in_transit",
  actual_departure: "2026-03-14T17:05:00.000Z"
}

/** The same transfer as the dispensary sees it when it arrives (the `transfer.arrived` event). */
const arrivedTransfer: typeof Transfer.Transfer.Encoded = {
  ...transfer,
  actual_arrival: "2026-03-14T19:12:00.000Z",
  facility_id: RETAIL_FACILITY_ID
}

const sale: typeof Sale.Sale.Encoded = {
  id: id("sale", "603000042"),
  receipt_number: "R-603000042",
  sale_date: "2026-03-15T18:42:00.000Z",
  customer_type: "Consumer",
  patient_license: null,
  caregiver_license: null,
  items: [{
    package_id: SPLIT_PACKAGE_ID,
    tag: TAG.split,
    item_name: "Blue Dream Buds",
    quantity: 3.5,
    unit_of_measure: "Grams",
    unit_price: 12,
    discount: 0,
    total: 42
  }],
  total_price: 42,
  total_discount: 0,
  facility_id: RETAIL_FACILITY_ID,
  provider: PROVIDER,
  provider_sale_id: "603000042"
}

const salesDelivery: typeof SalesDelivery.SalesDelivery.Encoded = {
  id: id("sales_delivery", "703000042"),
  recipient_name: "Sam Example",
  recipient_city: "Denver",
  recipient_state: STATE,
  delivery_date: "2026-03-15T20:15:00.000Z",
  customer_type: "Consumer",
  patient_license: null,
  status: "InProgress",
  items: [{ package_id: SPLIT_PACKAGE_ID, item_name: "Blue Dream Buds", unit_of_measure: "Grams", quantity: 3.5 }],
  facility_id: RETAIL_FACILITY_ID,
  provider: PROVIDER,
  provider_delivery_id: "703000042"
}

const patient: typeof Patient.Patient.Encoded = {
  id: id("patient", "304000042"),
  patient_license_number: "SBX-PT-000042",
  license_effective_start_date: "2026-01-05",
  license_effective_end_date: "2027-01-05",
  recommended_plants_count: 6,
  recommended_smokable_quantity: 56,
  has_sales_limit_exemption: false,
  facility_id: RETAIL_FACILITY_ID,
  provider: PROVIDER,
  provider_patient_id: "304000042"
}

const chainOfCustody: typeof ChainOfCustody.ChainOfCustody.Encoded = {
  plants: harvestedPlants,
  harvests: [harvest],
  source_packages: [sourcePackage],
  package: newPackage,
  lab_results: [labResult, recordedLabResult],
  transfers: [transfer],
  sales: [sale]
}

// ---------------------------------------------------------------------------------------------
// Providers, the sandbox and webhooks
// ---------------------------------------------------------------------------------------------

/** Every installed provider as `GET /v1/providers` lists it, shortened to one state each. */
const providers: ReadonlyArray<typeof ProviderModule.Summary.Encoded> = Catalog.modules.map((module) => {
  const summary = ProviderModule.summary(module.descriptor)
  return { ...summary, states: summary.states.filter((s, i) => s.state === STATE || i === 0).slice(0, 1) }
})

const EVENT_ID = "evt_2k7mqd8fjb4"

const transferArrived: typeof WebhookEvent.TransferArrived.Encoded = {
  id: EVENT_ID,
  created: "2026-03-14T19:12:00.000Z",
  api_version: WebhookEvent.API_VERSION,
  type: "transfer.arrived",
  data: {
    id: arrivedTransfer.id,
    connection_id: CONNECTION_ID,
    facility_id: RETAIL_FACILITY_ID,
    transfer: arrivedTransfer
  }
}

const simulated: typeof Sandbox.Simulated.Encoded = {
  scenario: "transfer_arrived",
  event: transferArrived,
  deliveries: 1
}

const fault: typeof Fault.Fault.Encoded = { kind: "rate_limited", retry_after: 30 }

const WEBHOOK_ID = "wh_9d2f4c1a6b8e4f03a7c5d1e2b3f4a5c6"

const createWebhook: typeof Webhooks.WebhookCreate.Encoded = {
  url: "https://api.example.com/tracebridge/webhooks",
  events: ["transfer.arrived", "lab_result.received"],
  description: "Inventory sync"
}

const webhook: typeof Webhooks.Webhook.Encoded = {
  id: WEBHOOK_ID,
  url: createWebhook.url,
  events: createWebhook.events,
  description: "Inventory sync",
  status: "enabled",
  created_at: "2026-03-01T09:00:00.000Z"
}

const withSecret: typeof Webhooks.WebhookWithSecret.Encoded = { ...webhook, secret: "whsec_…" }

const updateWebhook: typeof Webhooks.WebhookUpdate.Encoded = {
  events: ["transfer.arrived", "transfer.completed", "lab_result.received"],
  description: "Inventory and lab sync"
}

const delivered: typeof Webhooks.Delivery.Encoded = {
  id: "whd_1f0e2d3c4b5a69788796a5b4c3d2e1f0",
  webhook_id: WEBHOOK_ID,
  event_id: EVENT_ID,
  event_type: "transfer.arrived",
  status: "succeeded",
  next_attempt_at: null,
  created_at: "2026-03-14T19:12:01.000Z",
  attempts: [
    { attempt: 1, at: "2026-03-14T19:12:01.000Z", status_code: 503, error: "answered 503", duration_ms: 412 },
    { attempt: 2, at: "2026-03-14T19:13:01.000Z", status_code: 200, error: null, duration_ms: 87 }
  ]
}

const failed: typeof Webhooks.Delivery.Encoded = {
  id: "whd_8a7b6c5d4e3f20118293a4b5c6d7e8f9",
  webhook_id: WEBHOOK_ID,
  event_id: "evt_2k7mqd9a1c6",
  event_type: "lab_result.received",
  status: "failed",
  next_attempt_at: null,
  created_at: "2026-03-13T08:30:00.000Z",
  attempts: [
    { attempt: 1, at: "2026-03-13T08:30:00.000Z", status_code: 500, error: "answered 500", duration_ms: 231 },
    {
      attempt: 2,
      at: "2026-03-13T08:31:00.000Z",
      status_code: null,
      error: "request failed: Timeout",
      duration_ms: 10000
    }
  ]
}

/** The transfer's event as `GET /v1/events` lists it: delivered at the second attempt. */
const arrivedEvent: typeof Events.Event.Encoded = {
  id: EVENT_ID,
  type: "transfer.arrived",
  created_at: transferArrived.created,
  connection_id: CONNECTION_ID,
  data: transferArrived.data,
  delivery: {
    status: "delivered",
    endpoints: [{ webhook_id: WEBHOOK_ID, delivery_id: delivered.id, status: "succeeded", attempts: 2 }]
  }
}

// ---------------------------------------------------------------------------------------------
// The examples
// ---------------------------------------------------------------------------------------------

const tokenRequest: Readonly<Record<string, string>> = {
  grant_type: "client_credentials",
  client_id: CLIENT_ID,
  client_secret: "tb_secret_…"
}

const token: typeof Schemas.TokenResponse.Encoded = {
  access_token: "tb_at_…",
  token_type: "Bearer",
  expires_in: 3600,
  refresh_token: "tb_rt_…",
  scope: "sandbox"
}

const linkTokenCreate: typeof Schemas.LinkTokenCreate.Encoded = {
  external_id: EXTERNAL_ID,
  redirect_uri: "https://app.example.com/tracebridge/callback",
  state: CLIENT_STATE
}

const sandboxPublicTokenCreate: typeof Schemas.SandboxPublicTokenCreate.Encoded = {
  provider: PROVIDER,
  state: STATE,
  external_id: EXTERNAL_ID
}

const exchanged: typeof Schemas.Exchanged.Encoded = {
  connection_id: CONNECTION_ID,
  connection_token: "tb_ct_…",
  provider: PROVIDER,
  state: STATE,
  status: "active",
  client_state: CLIENT_STATE
}

// ---------------------------------------------------------------------------------------------
// The managed sync
// ---------------------------------------------------------------------------------------------

const SYNCED_AT = "2026-03-14T16:15:00.000Z"
const BACKFILLED_THROUGH = "2025-03-14T16:00:00.000Z"

const changes: typeof Change.Changes.Encoded = {
  data: [
    {
      id: "chg_1041",
      type: "packages",
      action: "upserted",
      object_id: SPLIT_PACKAGE_ID,
      object: newPackage,
      changed_at: SYNCED_AT
    },
    {
      id: "chg_1042",
      type: "lab_results",
      action: "upserted",
      object_id: recordedLabResult.id,
      object: recordedLabResult,
      changed_at: SYNCED_AT
    }
  ],
  meta: {
    request_id: REQUEST_ID,
    timestamp: NOW,
    ...ON_CONNECTION,
    next_cursor: "eyJ2IjoxLCJmIjoiZmFjXyIsInMiOjEwNDIsInQiOjE3NzM1MDUyMDUwMDB9",
    has_more: false,
    sync: { status: "live", backfilled_through: BACKFILLED_THROUGH, last_synced_at: SYNCED_AT }
  }
}

const resourceSync = (
  type: typeof Change.ChangeType.Encoded,
  count: number
): typeof Change.ResourceSync.Encoded => ({
  type,
  status: "live",
  count,
  backfilled_through: BACKFILLED_THROUGH,
  last_synced_at: SYNCED_AT,
  last_error: null
})

const connectionSync: typeof Change.ConnectionSync.Encoded = {
  connection_id: CONNECTION_ID,
  facilities: [{
    facility_id: FACILITY_ID,
    status: "live",
    backfilled_through: BACKFILLED_THROUGH,
    last_synced_at: SYNCED_AT,
    last_error: null,
    resources: [resourceSync("packages", 2), resourceSync("lab_results", 1), resourceSync("plants", 1)]
  }]
}

/**
 * The body of each operation's success answer (its 200 or 201 JSON), by `operationId`.
 *
 * @since 0.1.0
 * @category examples
 */
export const responses: Readonly<Record<string, unknown>> = {
  createToken: token,
  createLinkToken: one({ link_token: "link-sandbox-…", expires_at: "2026-03-14T20:20:05.000Z" }),
  exchangePublicToken: one(exchanged, ON_CONNECTION),
  createSandboxPublicToken: one({ public_token: PUBLIC_TOKEN }, ON_CONNECTION),
  listProviders: one(providers),
  listConnections: list([connection]),
  getConnection: one(connection, ON_CONNECTION),
  deleteConnection: one({ ...connection, status: "inactive" }, ON_CONNECTION),
  listFacilities: list([facility, labFacility, retailFacility], ON_CONNECTION),
  getFacility: one(facility, ON_CONNECTION),
  listPackages: list([sourcePackage, newPackage], ON_CONNECTION),
  createPackage: one(newPackage, ON_CONNECTION),
  getPackage: one(sourcePackage, ON_CONNECTION),
  getChainOfCustody: one(chainOfCustody, ON_CONNECTION),
  listPlants: list([plant], ON_CONNECTION),
  getPlant: one(plant, ON_CONNECTION),
  listHarvests: list([harvest], ON_CONNECTION),
  getHarvest: one(harvest, ON_CONNECTION),
  listLabResults: list([labResult], ON_CONNECTION),
  createLabResult: one(recordedLabResult, ON_CONNECTION),
  getLabResult: one(labResult, ON_CONNECTION),
  listTransfers: list([transfer], ON_CONNECTION),
  createTransfer: one(newTransfer, ON_CONNECTION),
  getTransfer: one(transfer, ON_CONNECTION),
  listSales: list([sale], ON_CONNECTION),
  getSale: one(sale, ON_CONNECTION),
  listSalesDeliveries: list([salesDelivery], ON_CONNECTION),
  getSalesDelivery: one(salesDelivery, ON_CONNECTION),
  listItems: list([item], ON_CONNECTION),
  getItem: one(item, ON_CONNECTION),
  listStrains: list([strain], ON_CONNECTION),
  getStrain: one(strain, ON_CONNECTION),
  listLocations: list([location], ON_CONNECTION),
  getLocation: one(location, ON_CONNECTION),
  listPatients: list([patient], ON_CONNECTION),
  getPatient: one(patient, ON_CONNECTION),
  listChanges: changes,
  getConnectionSync: one(connectionSync, ON_CONNECTION),
  simulateScenario: one(simulated, ON_CONNECTION),
  resetSandboxConnection: one<typeof Sandbox.SandboxReset.Encoded>(
    { connection_id: CONNECTION_ID, reset_at: NOW },
    ON_CONNECTION
  ),
  setSandboxFault: one<typeof Sandbox.SandboxFault.Encoded>({ connection_id: CONNECTION_ID, fault }, ON_CONNECTION),
  getSandboxFault: one<typeof Sandbox.SandboxFault.Encoded>({ connection_id: CONNECTION_ID, fault }, ON_CONNECTION),
  clearSandboxFault: one<typeof Sandbox.SandboxFault.Encoded>(
    { connection_id: CONNECTION_ID, fault: null },
    ON_CONNECTION
  ),
  createWebhook: one(withSecret),
  listWebhooks: list([webhook]),
  getWebhook: one(webhook),
  updateWebhook: one({ ...webhook, ...updateWebhook }),
  deleteWebhook: one<typeof Webhooks.WebhookDeleted.Encoded>({ id: WEBHOOK_ID, deleted: true }),
  rotateWebhookSecret: one(withSecret),
  listWebhookDeliveries: list([delivered, failed]),
  retryWebhookDelivery: one<typeof Webhooks.Delivery.Encoded>({ ...failed, status: "pending", next_attempt_at: NOW }),
  listEvents: list([arrivedEvent]),
  streamEvents: `retry: 1000\n: connected\n\nid: ${EVENT_ID}\nevent: transfer.arrived\ndata: ${
    JSON.stringify(transferArrived)
  }\n\n`,
  getEvent: one(arrivedEvent)
}

/**
 * The JSON request body of each operation that takes one, by `operationId` (for `createToken`, the
 * client-credentials grant; it also takes the same fields as a form).
 *
 * @since 0.1.0
 * @category examples
 */
export const requests: Readonly<Record<string, unknown>> = {
  createToken: tokenRequest,
  createLinkToken: linkTokenCreate,
  exchangePublicToken: { public_token: PUBLIC_TOKEN } satisfies typeof Schemas.Exchange.Encoded,
  createSandboxPublicToken: sandboxPublicTokenCreate,
  createPackage: splitPackage,
  createLabResult: recordLabResult,
  createTransfer,
  simulateScenario: { scenario: "transfer_arrived" } satisfies typeof Sandbox.Simulate.Encoded,
  setSandboxFault: fault,
  createWebhook,
  updateWebhook
}
