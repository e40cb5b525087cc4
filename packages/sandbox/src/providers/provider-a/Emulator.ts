/**
 * The provider_a (Metrc-style) emulator: every path the provider_a adapter uses, served from the
 * sandbox world and serialised through the adapter's own wire schemas (`Wire`, encode direction),
 * so that emulator and adapter cannot disagree on a field.
 *
 * Faithful to the research: HTTP Basic (vendor key : user key; sandbox user keys in `Logins`),
 * `licenseNumber` scoping (missing: 400, another login's licence: 403), v2 pages of at most 20 in
 * the `Data/Total/…` wrapper (unpaged when no `pageSize`), lastModified windows of at most 24 h
 * (required for sales receipts and deliveries), `{Message}` and `[{row,message}]` error bodies,
 * write bodies as arrays of at most 10 (413), `{Ids,Warnings}` answers, and a 429 with
 * `Retry-After` past a configurable request rate.
 *
 * @since 0.1.0
 */
import { Wire } from "@tracebridge/adapter-provider-a"
import type { Package, ProviderName } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { Either, Option, Schema } from "effect"
import * as Faults from "../../Faults.js"
import { keyOf } from "../../internal/key.js"
import type { Sandbox } from "../../Sandbox.js"
import type { FacilityData, World } from "../../World.js"
import { packageView, transfersOf } from "../../World.js"
import type { Refusal } from "../../Writes.js"
import * as Writes from "../../Writes.js"
import * as Logins from "./Logins.js"

type Rec = Record<string, unknown>

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } })
const message = (status: number, text: string) => json({ Message: text }, status)
const RATE_LIMITED =
  "The limit of API calls allowed has been exceeded. Please pace the usage rate of the API more apart."

const notFound = () => message(404, "The requested resource could not be found (incorrect or invalid URI).")

const HOUR = 3_600_000
const metrcTime = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "+00:00")
const dateTime = (
  iso: string | null
) => (iso === null ? null : iso.replace(/\.\d{3}Z$/, "+00:00").replace(/Z$/, "+00:00"))

const encoders = new Map<unknown, (a: any) => unknown>()
const encode = <A, I>(schema: Schema.Schema<A, I>, value: A): I => {
  let run = encoders.get(schema)
  if (run === undefined) {
    run = Schema.encodeSync(schema as Schema.Schema<any, any>)
    encoders.set(schema, run)
  }
  return run(value) as I
}

/**
 * Emulator settings.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Requests per second per user key before a 429 (default: no limit). */
  readonly requestsPerSecond?: number
}

const options = new WeakMap<Sandbox, Options>()
const windows = new WeakMap<Sandbox, Map<string, { start: number; count: number }>>()

/**
 * Sets the emulator's options for a sandbox.
 *
 * @since 0.1.0
 * @category configuration
 */
export const configure = (sandbox: Sandbox, settings: Options): void => {
  options.set(sandbox, settings)
}

const providerIdOf = (kind: Ids.Kind, id: string): string =>
  Option.getOrElse(Ids.decodeAs(kind, "provider_a", id), () => id)

// ------------------------------------------------------------------ encoders (world → wire)

const facilityWire = (data: FacilityData) => {
  const f = data.facility
  return encode(Wire.FacilityV2, {
    HireDate: "0001-01-01",
    IsOwner: f.user_permissions?.is_owner ?? false,
    IsManager: f.user_permissions?.is_manager ?? false,
    IsFinancialContact: f.user_permissions?.is_financial_contact ?? false,
    Occupations: [...(f.user_permissions?.occupations ?? [])],
    Name: f.name,
    Alias: f.alias,
    DisplayName: f.display_name,
    CredentialedDate: f.credentialed_date,
    SupportActivationDate: f.support_activation_date,
    SupportExpirationDate: f.support_expiration_date,
    SupportLastPaidDate: null,
    FacilityType: f.facility_type,
    License: {
      Number: f.license_number,
      StartDate: f.license_start_date,
      EndDate: f.license_end_date,
      LicenseType: f.license_type
    }
  })
}

const packageWire = (pkg: Package.Package) => {
  const m = pkg.metadata as Rec
  const str = (k: string) => (typeof m[k] === "string" ? (m[k] as string) : null)
  const bool = (k: string) => (typeof m[k] === "boolean" ? (m[k] as boolean) : null)
  const num = (k: string) => (typeof m[k] === "number" ? (m[k] as number) : null)
  return encode(Wire.PackageV2, {
    Id: Number(pkg.provider_package_id),
    Label: pkg.tag,
    PackageType: str("PackageType"),
    SourceHarvestCount: pkg.source_harvest_ids.length,
    SourceHarvestNames: str("SourceHarvestNames") ?? "",
    SourcePackageCount: pkg.source_package_ids.length,
    SourcePackageLabels: pkg.source_package_ids.map((id) => providerIdOf("package", id)).join(","),
    LocationId: null,
    LocationName: str("LocationName"),
    LocationTypeName: str("LocationTypeName"),
    SublocationName: null,
    Quantity: pkg.quantity,
    OriginalPackageQuantity: num("OriginalPackageQuantity"),
    UnitOfMeasureName: pkg.unit_of_measure,
    UnitOfMeasureAbbreviation: str("UnitOfMeasureAbbreviation"),
    PatientLicenseNumber: null,
    ItemFromFacilityLicenseNumber: null,
    ItemFromFacilityName: null,
    Note: null,
    PackagedDate: pkg.packaged_date,
    ExpirationDate: pkg.expiration_date,
    SellByDate: null,
    UseByDate: null,
    InitialLabTestingState: str("InitialLabTestingState"),
    LabTestingState: pkg.lab_testing_state,
    LabTestingStateDate: null,
    IsProductionBatch: bool("IsProductionBatch"),
    ProductionBatchNumber: null,
    IsTradeSample: bool("IsTradeSample"),
    IsDonation: bool("IsDonation"),
    IsTestingSample: bool("IsTestingSample"),
    ProductRequiresRemediation: bool("ProductRequiresRemediation"),
    ReceivedDateTime: null,
    ReceivedFromManifestNumber: null,
    ReceivedFromFacilityLicenseNumber: null,
    IsOnHold: pkg.is_on_hold,
    ArchivedDate: null,
    IsFinished: bool("IsFinished"),
    FinishedDate: null,
    LastModified: str("LastModified"),
    Item: {
      Id: num("ItemId"),
      Name: pkg.item_name,
      ProductCategoryName: pkg.item_category,
      StrainId: null,
      StrainName: pkg.item_strain,
      UnitWeight: null,
      UnitWeightUnitOfMeasureName: null
    },
    ProductName: null,
    ProductCategoryName: null,
    ItemStrainName: null
  })
}

const labRows = (world: World, data: FacilityData, pkg: Package.Package) =>
  packageView(data, pkg).lab_results.flatMap((r) =>
    r.results.map((t) =>
      encode(Wire.LabTestResultRow, {
        PackageId: Number(pkg.provider_package_id),
        LabTestResultId: Number(r.provider_result_id),
        LabFacilityLicenseNumber: r.lab_license,
        LabFacilityName: r.lab_name,
        SourcePackageLabel: pkg.tag,
        ProductName: pkg.item_name,
        ProductCategoryName: pkg.item_category,
        TestPerformedDate: r.test_date,
        OverallPassed: r.overall_passed,
        RevokedDate: null,
        ResultReleased: true,
        ResultReleaseDateTime: r.result_date === null ? null : `${r.result_date}T00:00:00+00:00`,
        ExpirationDateTime: null,
        TestTypeName: t.name,
        TestPassed: t.passed,
        TestResultLevel: t.value,
        TestComment: t.notes,
        TestInformationalOnly: false,
        LabTestDetailRevokedDate: null
      })
    )
  ).filter(() => world.provider === "provider_a")

const harvestOfPlant = (world: World, plantId: string) =>
  world.facilities.flatMap((d) => d.harvests).find((h) => h.source_plant_ids.includes(plantId as never))

const plantWire = (world: World, plant: FacilityData["plants"][number]) => {
  const harvest = harvestOfPlant(world, plant.id)
  return encode(Wire.PlantV2, {
    Id: Number(plant.provider_plant_id),
    Label: plant.tag,
    State: plant.harvest_date === null ? "Tracked" : "Harvested",
    GrowthPhase: plant.growth_phase === "vegetative"
      ? "Vegetative"
      : plant.growth_phase === "flowering"
      ? "Flowering"
      : "Immature",
    PlantBatchId: plant.plant_batch_id === null ? null : Number(plant.plant_batch_id),
    PlantBatchName: null,
    PlantBatchTypeName: null,
    StrainId: null,
    StrainName: plant.strain_name,
    LocationId: null,
    LocationName: plant.location,
    PatientLicenseNumber: null,
    HarvestId: harvest === undefined ? null : Number(harvest.provider_harvest_id),
    HarvestCount: harvest === undefined ? 0 : 1,
    IsOnHold: false,
    PlantedDate: plant.planted_date,
    VegetativeDate: plant.vegetative_date,
    FloweringDate: plant.flowering_date,
    HarvestedDate: plant.harvest_date,
    DestroyedDate: null,
    LastModified: metrcTime(world.modified.get(plant.id) ?? 0)
  })
}

const harvestWire = (world: World, h: FacilityData["harvests"][number]) =>
  encode(Wire.HarvestV2, {
    Id: Number(h.provider_harvest_id),
    Name: h.harvest_name,
    HarvestType: h.harvest_type,
    SourceStrainCount: 1,
    SourceStrainNames: h.strain_name,
    Strains: [],
    DryingLocationName: null,
    CurrentWeight: h.current_weight,
    TotalWasteWeight: h.total_waste_weight,
    PlantCount: h.plant_count,
    TotalWetWeight: null,
    PackageCount: null,
    UnitOfWeightName: h.unit_of_measure,
    LabTestingState: null,
    IsOnHold: false,
    HarvestStartDate: h.harvested_date,
    FinishedDate: null,
    ArchivedDate: null,
    LastModified: metrcTime(world.modified.get(h.id) ?? 0)
  })

type Seen = ReturnType<typeof transfersOf>[number]

const transferRow = (world: World, seen: Seen) => {
  const t = seen.transfer
  const id = numericTransferId(t.provider_transfer_id)
  const shipper = world.facilities.find((d) => d.facility.license_number === t.shipper_facility)
  const recipient = world.facilities.find((d) => d.facility.license_number === t.recipient_facility)
  const arrived = t.status === "received" || t.status === "rejected"
  return encode(Wire.TransferRow, {
    Id: id,
    ManifestNumber: seen.data.template ? null : t.manifest_number,
    ShipperFacilityLicenseNumber: t.shipper_facility,
    ShipperFacilityName: shipper?.facility.name ?? null,
    Name: seen.data.template ? `Template ${id}` : null,
    TransporterFacilityLicenseNumber: null,
    TransporterFacilityName: t.transporter,
    DriverName: t.driver_name,
    DriverOccupationalLicenseNumber: null,
    VehicleMake: t.vehicle_info,
    VehicleModel: null,
    VehicleLicensePlateNumber: null,
    DeliveryCount: 1,
    ReceivedDeliveryCount: arrived ? 1 : 0,
    PackageCount: t.packages.length,
    ReceivedPackageCount: t.status === "received" ? t.packages.length : 0,
    IsVoided: false,
    CreatedDateTime: null,
    LastModified: metrcTime(world.modified.get(t.id) ?? 0),
    DeliveryId: seen.data.template ? 0 : deliveryIdOf(id),
    RecipientFacilityLicenseNumber: seen.data.template ? null : t.recipient_facility,
    RecipientFacilityName: seen.data.template ? null : recipient?.facility.name ?? null,
    ShipmentTypeName: seen.data.template ? null : t.transfer_type,
    ShipmentTransactionType: seen.data.template ? null : "Standard",
    EstimatedDepartureDateTime: seen.data.template ? null : dateTime(t.estimated_departure),
    ActualDepartureDateTime: dateTime(t.actual_departure),
    EstimatedArrivalDateTime: seen.data.template ? null : dateTime(t.estimated_arrival),
    ActualArrivalDateTime: dateTime(t.actual_arrival),
    DeliveryPackageCount: t.packages.length,
    DeliveryReceivedPackageCount: t.status === "received" ? t.packages.length : 0,
    ReceivedDateTime: arrived ? dateTime(t.actual_arrival) : null
  })
}

const numericTransferId = (providerId: string) => Number(providerId.replace(/^template-/, ""))
const deliveryIdOf = (transferId: number) => transferId * 10 + 1

const deliveryPackages = (seen: Seen) =>
  seen.transfer.packages.map((p) =>
    encode(Wire.DeliveryPackage, {
      PackageId: null,
      PackageLabel: p.tag,
      PackageType: "Product",
      ItemId: null,
      ItemName: p.item_name,
      ItemCategoryName: null,
      ItemStrainName: null,
      LabTestingState: null,
      ShipmentPackageState: seen.transfer.status === "received"
        ? "Accepted"
        : seen.transfer.status === "rejected"
        ? "Rejected"
        : "Shipped",
      ShippedQuantity: p.quantity,
      ShippedUnitOfMeasureName: p.unit_of_measure,
      ReceivedQuantity: seen.transfer.status === "received" ? p.quantity : null,
      ReceivedUnitOfMeasureName: seen.transfer.status === "received" ? p.unit_of_measure : null
    })
  )

const saleWire = (world: World, s: FacilityData["sales"][number]) =>
  encode(Wire.SalesReceipt, {
    Id: Number(s.provider_sale_id),
    ReceiptNumber: s.receipt_number,
    ExternalReceiptNumber: null,
    SalesDateTime: dateTime(s.sale_date)!,
    SalesCustomerType: s.customer_type,
    PatientLicenseNumber: s.patient_license,
    CaregiverLicenseNumber: s.caregiver_license,
    IdentificationMethod: null,
    TotalPackages: s.items.length,
    TotalPrice: s.total_price,
    Transactions: s.items.map((i) => ({
      PackageId: null,
      PackageLabel: i.tag,
      ProductName: i.item_name,
      ProductCategoryName: null,
      ItemStrainName: null,
      QuantitySold: i.quantity,
      UnitOfMeasureName: i.unit_of_measure,
      UnitOfMeasureAbbreviation: null,
      TotalPrice: i.total,
      SalesDeliveryState: null,
      ArchivedDate: null,
      RecordedDateTime: null,
      LastModified: null
    })),
    IsFinal: true,
    ArchivedDate: null,
    RecordedDateTime: dateTime(s.sale_date),
    LastModified: metrcTime(world.modified.get(s.id) ?? 0)
  })

const deliveryWire = (world: World, d: FacilityData["salesDeliveries"][number]) =>
  encode(Wire.SalesDeliveryV2, {
    Id: Number(d.provider_delivery_id),
    DeliveryNumber: null,
    SalesDateTime: dateTime(d.delivery_date),
    SalesCustomerType: d.customer_type,
    PatientLicenseNumber: d.patient_license,
    DriverName: null,
    RecipientName: d.recipient_name,
    RecipientAddressCity: d.recipient_city,
    RecipientAddressState: d.recipient_state,
    EstimatedArrivalDateTime: dateTime(d.delivery_date),
    ActualArrivalDateTime: null,
    CompletedDateTime: d.status === "Completed" ? dateTime(d.delivery_date) : null,
    SalesDeliveryState: d.status,
    TotalPrice: null,
    Transactions: d.items.map((i) => ({
      PackageId: null,
      PackageLabel: providerIdOf("package", i.package_id),
      ProductName: i.item_name,
      ProductCategoryName: null,
      ItemStrainName: null,
      QuantitySold: i.quantity,
      UnitOfMeasureName: i.unit_of_measure,
      UnitOfMeasureAbbreviation: null,
      TotalPrice: 0,
      SalesDeliveryState: null,
      ArchivedDate: null,
      RecordedDateTime: null,
      LastModified: null
    })),
    VoidedDate: null,
    LastModified: metrcTime(world.modified.get(d.id) ?? 0)
  })

// ------------------------------------------------------------------ listing

const page = (
  world: World,
  rows: Rows,
  q: URLSearchParams,
  requireWindow = false
): Response => {
  const start = q.get("lastModifiedStart")
  const end = q.get("lastModifiedEnd")
  let selected = rows.items
  if (start !== null || end !== null) {
    const s = Date.parse(start ?? "")
    const e = Date.parse(end ?? "")
    if (Number.isNaN(s) || Number.isNaN(e) || e < s) {
      return message(400, "The lastModifiedStart and lastModifiedEnd parameters are invalid.")
    }
    if (e - s > 24 * HOUR) {
      return message(400, "The time span between lastModifiedStart and lastModifiedEnd may not exceed 24 hours.")
    }
    selected = rows.items.filter((r) => {
      const t = world.modified.get(r.id) ?? 0
      return t >= s && t < e
    })
  } else if (requireWindow) {
    return message(400, "The lastModifiedStart and lastModifiedEnd parameters are required.")
  }
  const size = q.get("pageSize")
  const total = selected.length
  if (size === null) {
    return json({
      Data: selected.map(rows.wire),
      Total: total,
      TotalRecords: total,
      PageSize: total,
      RecordsOnPage: total,
      Page: 1,
      CurrentPage: 1,
      TotalPages: total === 0 ? 0 : 1
    })
  }
  const pageSize = Number(size)
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 20) {
    return message(400, "The pageSize parameter must be between 1 and 20.")
  }
  const pageNumber = Number(q.get("pageNumber") ?? "1")
  if (!Number.isInteger(pageNumber) || pageNumber < 1) {
    return message(400, "The pageNumber parameter must be 1 or more.")
  }
  const data = selected.slice((pageNumber - 1) * pageSize, pageNumber * pageSize).map(rows.wire)
  return json({
    Data: data,
    Total: total,
    TotalRecords: total,
    PageSize: pageSize,
    RecordsOnPage: data.length,
    Page: pageNumber,
    CurrentPage: pageNumber,
    TotalPages: Math.ceil(total / pageSize)
  })
}

/** A list and how to put one of its items on the wire; only the page asked for is put there. */
interface Rows {
  readonly items: ReadonlyArray<{ readonly id: string }>
  readonly wire: (item: any) => unknown
}

const rows = <A extends { readonly id: string }>(items: ReadonlyArray<A>, wire: (a: A) => unknown): Rows => ({
  items,
  wire: (item: A) => wire(item)
})

/** Rows already paired with their wire functions. */
const thunks = (list: ReadonlyArray<{ readonly id: string; readonly wire: () => unknown }>): Rows =>
  rows(list, (row) => row.wire())

const one = (found: unknown) => (found === undefined ? notFound() : json(found))

const read = (world: World, data: FacilityData, path: string, q: URLSearchParams): Response => {
  let m: RegExpExecArray | null
  const pkgRows = (items: ReadonlyArray<Package.Package>) => rows(items, packageWire)
  const findPackage = (key: string) => data.packages.find((p) => p.provider_package_id === key || p.tag === key)
  if (path === "/packages/v2/active") return page(world, pkgRows(data.packages), q)
  if (path === "/packages/v2/onhold") return page(world, pkgRows(data.packages.filter((p) => p.is_on_hold)), q)
  if (path === "/packages/v2/inactive") return page(world, rows([], packageWire), q)
  if ((m = /^\/packages\/v2\/(\d+)\/source\/harvests$/.exec(path))) {
    const pkg = findPackage(m[1]!)
    if (pkg === undefined) return notFound()
    const harvests = world.facilities.flatMap((d) => d.harvests).filter((h) => pkg.source_harvest_ids.includes(h.id))
    return page(
      world,
      rows(harvests, (h) =>
        encode(Wire.PackageSourceHarvest, {
          HarvestId: Number(h.provider_harvest_id),
          HarvestName: h.harvest_name,
          HarvestStartDate: h.harvested_date
        })),
      q
    )
  }
  if ((m = /^\/packages\/v2\/([^/]+)$/.exec(path))) {
    const pkg = findPackage(decodeURIComponent(m[1]!))
    return one(pkg === undefined ? undefined : packageWire(pkg))
  }
  if (path === "/tags/v2/package/available") {
    return json(
      Writes.availableTags(world, data.facility.license_number, 10).map((Label, i) =>
        encode(Wire.AvailableTag, { Id: i + 1, Label })
      )
    )
  }
  const plantRows = (filter: (p: FacilityData["plants"][number]) => boolean) =>
    rows(data.plants.filter(filter), (p) => plantWire(world, p))
  if (path === "/plants/v2/vegetative") {
    return page(
      world,
      plantRows((p) => p.growth_phase === "vegetative" && p.harvest_date === null),
      q
    )
  }
  if (path === "/plants/v2/flowering") {
    return page(
      world,
      plantRows((p) => p.growth_phase === "flowering" && p.harvest_date === null),
      q
    )
  }
  if (path === "/plants/v2/inactive") return page(world, plantRows((p) => p.harvest_date !== null), q)
  if ((m = /^\/plants\/v2\/([^/]+)$/.exec(path))) {
    const key = decodeURIComponent(m[1]!)
    const plant = data.plants.find((p) => p.provider_plant_id === key || p.tag === key)
    return one(plant === undefined ? undefined : plantWire(world, plant))
  }
  if (path === "/harvests/v2/active") return page(world, rows(data.harvests, (h) => harvestWire(world, h)), q)
  if ((m = /^\/harvests\/v2\/(\d+)$/.exec(path))) {
    const h = data.harvests.find((x) => x.provider_harvest_id === m![1])
    return one(h === undefined ? undefined : harvestWire(world, h))
  }
  if (path === "/labtests/v2/results") {
    const id = q.get("packageId")
    if (id === null) return message(400, "The packageId parameter is required.")
    const pkg = data.packages.find((p) => p.provider_package_id === id)
    const list = pkg === undefined ? [] : labRows(world, data, pkg)
    return page(world, thunks(list.map((wire, i) => ({ id: `${id}:${i}`, wire: () => wire }))), q)
  }
  const seen = transfersOf(world, data)
  const transferRows = (filter: (s: Seen) => boolean) =>
    thunks(seen.filter(filter).map((s) => ({ id: s.transfer.id as string, wire: () => transferRow(world, s) })))
  if (path === "/transfers/v2/incoming") {
    return page(
      world,
      transferRows((s) => !s.data.template && s.direction === "incoming"),
      q
    )
  }
  if (path === "/transfers/v2/outgoing") {
    return page(
      world,
      transferRows((s) => !s.data.template && s.direction === "outgoing"),
      q
    )
  }
  if (path === "/transfers/v2/rejected") {
    return page(
      world,
      transferRows((s) => !s.data.template && s.direction === "outgoing" && s.transfer.status === "rejected"),
      q
    )
  }
  if (path === "/transfers/v2/templates/outgoing") {
    return page(
      world,
      transferRows((s) => s.data.template && s.direction === "outgoing"),
      q
    )
  }
  if ((m = /^\/transfers\/v2\/deliveries\/(\d+)\/packages$/.exec(path))) {
    const found = seen.find((s) =>
      !s.data.template && deliveryIdOf(numericTransferId(s.transfer.provider_transfer_id)) === Number(m![1])
    )
    return page(
      world,
      thunks((found === undefined ? [] : deliveryPackages(found)).map((wire, i) => ({
        id: `${m![1]}:${i}`,
        wire: () => wire
      }))),
      q
    )
  }
  if ((m = /^\/transfers\/v2\/templates\/outgoing\/(\d+)\/deliveries$/.exec(path))) {
    const found = seen.find((s) =>
      s.data.template && numericTransferId(s.transfer.provider_transfer_id) === Number(m![1])
    )
    const deliveries = found === undefined ? [] : [encode(Wire.TransferDelivery, {
      Id: deliveryIdOf(Number(m[1])),
      RecipientFacilityLicenseNumber: found.transfer.recipient_facility,
      RecipientFacilityName: null,
      ShipmentTypeName: found.transfer.transfer_type,
      EstimatedDepartureDateTime: dateTime(found.transfer.estimated_departure),
      ActualDepartureDateTime: null,
      EstimatedArrivalDateTime: dateTime(found.transfer.estimated_arrival),
      ActualArrivalDateTime: null,
      DeliveryPackageCount: found.transfer.packages.length,
      DeliveryReceivedPackageCount: 0,
      ReceivedDateTime: null
    })]
    return page(world, thunks(deliveries.map((wire, i) => ({ id: `${m![1]}:d${i}`, wire: () => wire }))), q)
  }
  if ((m = /^\/transfers\/v2\/templates\/outgoing\/deliveries\/(\d+)\/packages$/.exec(path))) {
    const found = seen.find((s) =>
      s.data.template && deliveryIdOf(numericTransferId(s.transfer.provider_transfer_id)) === Number(m![1])
    )
    return page(
      world,
      thunks((found === undefined ? [] : deliveryPackages(found)).map((wire, i) => ({
        id: `${m![1]}:${i}`,
        wire: () => wire
      }))),
      q
    )
  }
  if (path === "/sales/v2/receipts/active") return page(world, rows(data.sales, (s) => saleWire(world, s)), q, true)
  if ((m = /^\/sales\/v2\/receipts\/(\d+)$/.exec(path))) {
    const s = data.sales.find((x) => x.provider_sale_id === m![1])
    return one(s === undefined ? undefined : saleWire(world, s))
  }
  if (path === "/sales/v2/deliveries/active") {
    return page(
      world,
      rows(data.salesDeliveries, (d) => deliveryWire(world, d)),
      q,
      true
    )
  }
  if ((m = /^\/sales\/v2\/deliveries\/(\d+)$/.exec(path))) {
    const d = data.salesDeliveries.find((x) => x.provider_delivery_id === m![1])
    return one(d === undefined ? undefined : deliveryWire(world, d))
  }
  const catalog = {
    items: rows(data.items, (i) =>
      encode(Wire.ItemV2, {
        Id: Number(i.provider_item_id),
        Name: i.name,
        ProductCategoryName: i.category,
        ProductCategoryType: null,
        QuantityType: i.unit_of_measure === "Each" ? "CountBased" : "WeightBased",
        UnitOfMeasureName: i.unit_of_measure,
        ApprovalStatus: "Approved",
        StrainId: null,
        StrainName: i.strain,
        UnitWeight: i.unit_weight,
        UnitWeightUnitOfMeasureName: null
      })),
    strains: rows(data.strains, (s) =>
      encode(Wire.StrainV2, {
        Id: Number(s.provider_strain_id),
        Name: s.name,
        TestingStatus: "ThirdParty",
        ThcLevel: null,
        CbdLevel: null,
        IndicaPercentage: s.indica_percentage,
        SativaPercentage: s.sativa_percentage,
        Genetics: s.genetics
      })),
    locations: rows(data.locations, (l) =>
      encode(Wire.LocationV2, {
        Id: Number(l.provider_location_id),
        Name: l.name,
        LocationTypeId: 1,
        LocationTypeName: l.location_type
      })),
    patients: rows(data.patients, (p) =>
      encode(Wire.PatientV2, {
        PatientId: Number(p.provider_patient_id),
        LicenseNumber: p.patient_license_number,
        RegistrationDate: p.license_effective_start_date,
        LicenseEffectiveStartDate: p.license_effective_start_date,
        LicenseEffectiveEndDate: p.license_effective_end_date,
        RecommendedPlants: p.recommended_plants_count,
        RecommendedSmokableQuantity: p.recommended_smokable_quantity,
        HasSalesLimitExemption: p.has_sales_limit_exemption
      }))
  }
  for (const area of ["items", "strains", "locations", "patients"] as const) {
    if (path === `/${area}/v2/active`) return page(world, catalog[area], q)
    if ((m = new RegExp(`^/${area}/v2/(\\d+)$`).exec(path))) {
      const kind = area === "items"
        ? "item"
        : area === "strains"
        ? "strain"
        : area === "locations"
        ? "location"
        : "patient"
      const found = catalog[area].items.find((r) => providerIdOf(kind, r.id) === m![1])
      return one(found === undefined ? undefined : catalog[area].wire(found))
    }
  }
  return notFound()
}

// ------------------------------------------------------------------ writes

const refusalRows = (refusal: Refusal) => json([{ row: 0, message: refusal.message }], 400)

const write = (sandbox: Sandbox, world: World, data: FacilityData, path: string, body: unknown): Response => {
  if (!Array.isArray(body) || body.length === 0) return message(400, "No data was submitted.")
  if (body.length > 10) return new Response(null, { status: 413 })
  const now = sandbox.now()
  const license = data.facility.license_number
  if (path === "/packages/v2/") {
    const decoded = Schema.decodeUnknownEither(Wire.CreatePackage)(body[0])
    if (Either.isLeft(decoded)) return json([{ row: 0, message: "The package data is invalid." }], 400)
    const obj = decoded.right
    const result = sandbox.apply<Package.Package>(world, {
      _tag: "SplitPackage",
      input: {
        license,
        tag: obj.Tag,
        itemName: obj.Item ?? "",
        quantity: obj.Quantity,
        unit: obj.UnitOfMeasure,
        ingredients: obj.Ingredients.map((i) => ({ tag: i.Package, quantity: i.Quantity, unit: i.UnitOfMeasure })),
        at: now
      }
    })
    return Either.match(result, {
      onLeft: refusalRows,
      onRight: (created) =>
        json(encode(Wire.WriteResult, { Ids: [Number(created.provider_package_id)], Warnings: null }))
    })
  }
  if (path === "/labtests/v2/record") {
    const decoded = Schema.decodeUnknownEither(Wire.RecordLabTest)(body[0])
    if (Either.isLeft(decoded)) return json([{ row: 0, message: "The lab test data is invalid." }], 400)
    const obj = decoded.right
    const result = sandbox.apply<{ readonly provider_result_id: string }>(world, {
      _tag: "RecordLabResult",
      input: {
        license,
        tag: obj.Label,
        results: obj.Results.map((r) => ({
          name: r.LabTestTypeName,
          value: r.Quantity,
          passed: r.Passed,
          notes: r.Notes
        })),
        testDate: obj.ResultDate.slice(0, 10),
        at: now
      }
    })
    return Either.match(result, {
      onLeft: refusalRows,
      onRight: (created) =>
        json(encode(Wire.WriteResult, { Ids: [Number(created.provider_result_id)], Warnings: null }))
    })
  }
  if (path === "/transfers/v2/templates/outgoing") {
    const decoded = Schema.decodeUnknownEither(Wire.CreateTemplate)(body[0])
    if (Either.isLeft(decoded)) return json([{ row: 0, message: "The transfer template data is invalid." }], 400)
    const obj = decoded.right
    const destination = obj.Destinations[0]
    if (destination === undefined) return json([{ row: 0, message: "A transfer template needs a destination." }], 400)
    const result = sandbox.apply<{ readonly provider_transfer_id: string }>(world, {
      _tag: "CreateTransfer",
      input: {
        license,
        recipient: destination.RecipientLicenseNumber,
        transferType: destination.TransferTypeName,
        tags: destination.Packages.map((p) => p.PackageLabel),
        estimatedDeparture: destination.EstimatedDepartureDateTime,
        estimatedArrival: destination.EstimatedArrivalDateTime,
        driverName: obj.DriverName,
        vehicleInfo: [obj.VehicleMake, obj.VehicleModel, obj.VehicleLicensePlateNumber].filter((x) =>
          x !== null && x !== ""
        ).join(" ") || null,
        transporter: obj.TransporterFacilityLicenseNumber,
        template: true,
        at: now
      }
    })
    return Either.match(result, {
      onLeft: refusalRows,
      onRight: (created) =>
        json(encode(Wire.WriteResult, { Ids: [numericTransferId(created.provider_transfer_id)], Warnings: null }))
    })
  }
  return notFound()
}

// ------------------------------------------------------------------ entry

const userKeyOf = (request: Request): string | undefined => {
  const header = request.headers.get("authorization")
  if (header === null || !header.startsWith("Basic ")) return undefined
  try {
    const decoded = atob(header.slice(6))
    const colon = decoded.indexOf(":")
    if (colon <= 0) return undefined
    return decoded.slice(colon + 1)
  } catch {
    return undefined
  }
}

/**
 * Answers one request for `/provider_a/{state}{path}`.
 *
 * @since 0.1.0
 * @category handlers
 */
export const handle = async (
  sandbox: Sandbox,
  state: ProviderName.UsState,
  path: string,
  request: Request
): Promise<Response> => {
  const userKey = userKeyOf(request)
  if (userKey === undefined) return new Response(null, { status: 401 })
  const outcome = Logins.checkUserKey(userKey)
  if (outcome._tag === "Invalid") return new Response(null, { status: 401 })
  if (outcome._tag === "Locked") return message(401, "The user account is locked. Contact the state system's support.")

  const fault = Faults.get(sandbox, keyOf("provider_a", state, outcome.login))
  switch (fault?.kind) {
    case "outage":
      return Faults.outage()
    case "malformed":
      return Faults.malformed()
    case "rate_limited":
      return json({ Message: RATE_LIMITED }, 429, { "retry-after": String(Faults.retryAfterOf(fault)) })
    case "expired_login":
      // Metrc answers a revoked or expired user key as any refused login.
      return new Response(null, { status: 401 })
    default:
      return Faults.delayed(await answer(sandbox, state, path, request, userKey, outcome.login), Faults.delayFor(fault))
  }
}

const answer = async (
  sandbox: Sandbox,
  state: ProviderName.UsState,
  path: string,
  request: Request,
  userKey: string,
  login: string
): Promise<Response> => {
  const limit = options.get(sandbox)?.requestsPerSecond
  if (limit !== undefined) {
    const now = sandbox.now()
    const perKey = windows.get(sandbox) ?? new Map()
    windows.set(sandbox, perKey)
    const current = perKey.get(userKey)
    if (current === undefined || now - current.start >= 1000) perKey.set(userKey, { start: now, count: 1 })
    else if (++current.count > limit) {
      return json(
        { Message: RATE_LIMITED },
        429,
        {
          "retry-after": String(Math.max(1, Math.ceil((current.start + 1000 - now) / 1000)))
        }
      )
    }
  }

  const world = sandbox.world("provider_a", state, login)
  if (world.loginRequired === true) {
    // The connection_login_required scenario: the next call finds the login refused, once.
    world.loginRequired = false
    return new Response(null, { status: 401 })
  }
  const url = new URL(request.url)
  if (request.method === "GET" && (path === "/facilities/v2/" || path === "/facilities/v2")) {
    return json(world.facilities.map(facilityWire))
  }
  const license = url.searchParams.get("licenseNumber")
  if (license === null) return message(400, "The licenseNumber parameter is required.")
  const data = world.facilities.find((d) => d.facility.license_number === license)
  if (data === undefined) return message(403, "The authenticated user does not have access to the requested resource.")
  if (request.method === "POST") {
    let body: unknown
    try {
      body = JSON.parse(await request.text())
    } catch {
      return message(400, "The request is invalid.")
    }
    return write(sandbox, world, data, path, body)
  }
  if (request.method !== "GET") return new Response(null, { status: 405 })
  return read(world, data, path, url.searchParams)
}
