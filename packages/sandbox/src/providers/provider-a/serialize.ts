/**
 * From a sandbox world to Metrc's JSON, written here by hand (not through the adapter's wire
 * schemas, so that a mistake in those schemas cannot hide itself): Metrc's field names, in the
 * order of its documentation, and its value formats (see `time.ts`).
 *
 * Every field of the documented objects is written. A field the world knows is written from it;
 * one it can derive (an id looked up by name, a count) is derived; a flag it never sets is
 * written as Metrc's default (`false`, `0`, `[]`); anything else is `null`. Package fields the
 * adapter keeps in `metadata` come from the package's own `metadata` only, so that what the
 * adapter reads back equals the world. `test/providers/provider-a/Fidelity.test.ts` checks every
 * answer against the documented examples (`test/fixtures/provider-a/`).
 */
import type { Facility, Harvest, Item, LabResult, Location, Package, Patient, Plant, Sale } from "@tracebridge/core"
import type { SalesDelivery, Strain } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { Option } from "effect"
import type { FacilityData, transfersOf, World } from "../../World.js"
import { packageView } from "../../World.js"
import { instant, local, NO_LOCAL_TIME, withOffset } from "./time.js"

type Json = Record<string, unknown>

/** What a serialiser reads: the world, and the facility whose licence the request named. */
export interface Scope {
  readonly world: World
  readonly data: FacilityData
}

/** A transfer as one facility sees it. */
export type Seen = ReturnType<typeof transfersOf>[number]

// ------------------------------------------------------------------ vocabulary

/** Metrc's units of measure (`GET /unitsofmeasure/v2/active`, Colorado's list). */
export const UNITS: ReadonlyArray<
  { readonly QuantityType: string; readonly Name: string; readonly Abbreviation: string }
> = [
  { QuantityType: "CountBased", Name: "Each", Abbreviation: "ea" },
  { QuantityType: "WeightBased", Name: "Ounces", Abbreviation: "oz" },
  { QuantityType: "WeightBased", Name: "Pounds", Abbreviation: "lb" },
  { QuantityType: "WeightBased", Name: "Grams", Abbreviation: "g" },
  { QuantityType: "WeightBased", Name: "Milligrams", Abbreviation: "mg" },
  { QuantityType: "WeightBased", Name: "Kilograms", Abbreviation: "kg" }
]

const abbreviationOf = (unit: string): string | null => UNITS.find((u) => u.Name === unit)?.Abbreviation ?? null

const quantityTypeOf = (unit: string): string => UNITS.find((u) => u.Name === unit)?.QuantityType ?? "WeightBased"

// ------------------------------------------------------------------ look-ups

/** The provider id of a Tracebridge id (the id itself when it is not one). */
export const providerIdOf = (kind: Ids.Kind, id: string): string =>
  Option.getOrElse(Ids.decodeAs(kind, "provider_a", id), () => id)

/** Metrc's `LastModified` of a record: when the world last changed it (the epoch when never). */
const lastModified = (world: World, id: string): string => instant(world.modified.get(id) ?? 0)

const facilityByLicense = (world: World, license: string): Facility.Facility | undefined =>
  world.facilities.find((d) => d.facility.license_number === license)?.facility

const packageByTag = (world: World, tag: string): Package.Package | undefined => {
  for (const d of world.facilities) {
    const found = d.packages.find((p) => p.tag === tag)
    if (found !== undefined) return found
  }
  return undefined
}

const locationNamed = (data: FacilityData, name: string | null): Location.Location | undefined =>
  name === null ? undefined : data.locations.find((l) => l.name === name)

const idOrNull = (providerId: string | undefined): number | null => providerId === undefined ? null : Number(providerId)

const strainId = (data: FacilityData, name: string | null): number | null =>
  idOrNull(name === null ? undefined : data.strains.find((s) => s.name === name)?.provider_strain_id)

// ------------------------------------------------------------------ facilities

/** One facility of `GET /facilities/v2/`. */
export const facility = (data: FacilityData): Json => {
  const f = data.facility
  return {
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
    FacilityType: f.facility_type,
    License: {
      Number: f.license_number,
      StartDate: f.license_start_date,
      EndDate: f.license_end_date,
      LicenseType: f.license_type
    }
  }
}

// ------------------------------------------------------------------ items, strains, locations, patients

/** The fields Metrc's item object (`GET /items/v2/…`, a package's `Item`) has beyond these. */
const itemDetails = (scope: Scope, unit: string | null, strain: string | null, unitWeight: number | null) => ({
  QuantityType: unit === null ? null : quantityTypeOf(unit),
  DefaultLabTestingState: "NotSubmitted",
  UnitOfMeasureName: unit,
  ApprovalStatus: "Approved",
  ApprovalStatusDateTime: "0001-01-01T00:00:00+00:00",
  StrainId: strainId(scope.data, strain),
  StrainName: strain,
  ItemBrandId: 0,
  ItemBrandName: null,
  AdministrationMethod: null,
  UnitCbdPercent: null,
  UnitCbdContent: null,
  UnitCbdContentUnitOfMeasureName: null,
  UnitCbdContentDose: null,
  UnitCbdContentDoseUnitOfMeasureName: null,
  UnitThcPercent: null,
  UnitThcContent: null,
  UnitThcContentUnitOfMeasureName: null,
  UnitThcContentDose: null,
  UnitThcContentDoseUnitOfMeasureName: null,
  UnitVolume: null,
  UnitVolumeUnitOfMeasureName: null,
  UnitWeight: unitWeight,
  UnitWeightUnitOfMeasureName: unitWeight === null ? null : "Grams",
  ServingSize: null,
  SupplyDurationDays: null,
  NumberOfDoses: null,
  UnitQuantity: null,
  UnitQuantityUnitOfMeasureName: null,
  PublicIngredients: null,
  Description: null
})

/** One item of `GET /items/v2/active|{id}`. */
export const item = (scope: Scope, i: Item.Item): Json => ({
  Id: Number(i.provider_item_id),
  Name: i.name,
  ProductCategoryName: i.category,
  ProductCategoryType: null,
  IsExpirationDateRequired: false,
  HasExpirationDate: false,
  IsSellByDateRequired: false,
  HasSellByDate: false,
  IsUseByDateRequired: false,
  HasUseByDate: false,
  ...itemDetails(scope, i.unit_of_measure, i.strain, i.unit_weight),
  Allergens: null,
  ProductImages: [],
  ProductPhotoDescription: null,
  LabelImages: [],
  LabelPhotoDescription: null,
  PackagingImages: [],
  PackagingPhotoDescription: null,
  ProductPDFDocuments: [],
  IsUsed: scope.data.packages.some((p) => p.item_name === i.name),
  LabTestBatchNames: [],
  ProcessingJobCategoryName: null
})

/** One strain of `GET /strains/v2/active|{id}`. */
export const strain = (scope: Scope, s: Strain.Strain): Json => ({
  Id: Number(s.provider_strain_id),
  Name: s.name,
  TestingStatus: "ThirdParty",
  ThcLevel: null,
  CbdLevel: null,
  IndicaPercentage: s.indica_percentage,
  SativaPercentage: s.sativa_percentage,
  IsUsed: scope.data.items.some((i) => i.strain === s.name) || scope.data.plants.some((p) => p.strain_name === s.name),
  Genetics: s.genetics
})

/** One location of `GET /locations/v2/active|{id}` (every world location takes everything). */
export const location = (l: Location.Location): Json => ({
  Id: Number(l.provider_location_id),
  Name: l.name,
  LocationTypeId: 1,
  LocationTypeName: l.location_type,
  ForPlantBatches: true,
  ForPlants: true,
  ForHarvests: true,
  ForPackages: true
})

/** One patient of `GET /patients/v2/active|{id}`. */
export const patient = (p: Patient.Patient): Json => ({
  PatientId: Number(p.provider_patient_id),
  LicenseNumber: p.patient_license_number,
  RegistrationDate: p.license_effective_start_date,
  LicenseEffectiveStartDate: p.license_effective_start_date,
  LicenseEffectiveEndDate: p.license_effective_end_date,
  RecommendedPlants: p.recommended_plants_count,
  RecommendedSmokableQuantity: p.recommended_smokable_quantity,
  HasSalesLimitExemption: p.has_sales_limit_exemption,
  OtherFacilitiesCount: 0
})

// ------------------------------------------------------------------ packages

/**
 * A package's hold flags, by the kind of its hold: `IsOnHold` for an administrative hold,
 * `IsOnInvestigation` (with `IsOnInvestigationHold`) for an investigation, `IsOnRecall` for a
 * recall; `IsOnHoldCombined` for any of them.
 */
export const holdFlags = (world: World, p: Package.Package) => {
  const kind = p.is_on_hold ? world.holds.get(p.id) ?? "administrative" : undefined
  return {
    IsOnHold: kind === "administrative",
    IsOnHoldCombined: kind !== undefined,
    IsOnInvestigation: kind === "investigation",
    IsOnInvestigationHold: kind === "investigation",
    IsOnInvestigationRecall: false,
    IsOnRecall: kind === "recall",
    IsOnRecallCombined: kind === "recall"
  }
}

/** One package of `GET /packages/v2/active|onhold|inactive|{id}|{label}`. */
export const pkg = (scope: Scope, p: Package.Package): Json => {
  const m = p.metadata as Json
  const str = (k: string) => (typeof m[k] === "string" ? (m[k] as string) : null)
  const bool = (k: string) => (typeof m[k] === "boolean" ? (m[k] as boolean) : null)
  const num = (k: string) => (typeof m[k] === "number" ? (m[k] as number) : null)
  const locationName = str("LocationName")
  const results = scope.data.labResults.filter((r) => r.package_id === p.id)
  const recorded = results.map((r) => r.result_date ?? r.test_date).filter((d): d is string => d !== null).sort()
  const receivedFrom = str("ReceivedFromFacilityLicenseNumber")
  const catalogued = scope.data.items.find((i) => i.name === p.item_name)
  const details = itemDetails(
    scope,
    catalogued?.unit_of_measure ?? null,
    p.item_strain,
    catalogued?.unit_weight ?? null
  )
  return {
    Id: Number(p.provider_package_id),
    Label: p.tag,
    ExternalId: null,
    PackageType: str("PackageType"),
    SourceHarvestCount: p.source_harvest_ids.length,
    SourcePackageCount: p.source_package_ids.length,
    SourceProcessingJobCount: 0,
    SourceHarvestNames: str("SourceHarvestNames") ?? "",
    SourcePackageLabels: p.source_package_ids.map((id) => providerIdOf("package", id)).join(","),
    LocationId: idOrNull(locationNamed(scope.data, locationName)?.provider_location_id),
    LocationName: locationName,
    SublocationId: null,
    SublocationName: str("SublocationName"),
    LocationTypeName: str("LocationTypeName"),
    Quantity: p.quantity,
    OriginalPackageQuantity: num("OriginalPackageQuantity"),
    UnitOfMeasureName: p.unit_of_measure,
    UnitOfMeasureAbbreviation: str("UnitOfMeasureAbbreviation"),
    PatientLicenseNumber: str("PatientLicenseNumber") ?? "",
    ItemFromFacilityLicenseNumber: str("ItemFromFacilityLicenseNumber"),
    ItemFromFacilityName: str("ItemFromFacilityName"),
    Note: str("Note") ?? "",
    PackagedDate: p.packaged_date,
    ExpirationDate: p.expiration_date,
    SellByDate: str("SellByDate"),
    UseByDate: str("UseByDate"),
    InitialLabTestingState: str("InitialLabTestingState"),
    LabTestingState: p.lab_testing_state,
    LabTestingStateDate: str("LabTestingStateDate"),
    LabTestingPerformedDate: null,
    LabTestResultExpirationDateTime: null,
    LabTestingRecordedDate: recorded.at(-1) ?? null,
    LabTestStageId: null,
    LabTestStage: null,
    IsProductionBatch: bool("IsProductionBatch"),
    ProductionBatchNumber: str("ProductionBatchNumber") ?? "",
    SourceProductionBatchNumbers: "",
    IsTradeSample: bool("IsTradeSample"),
    IsTradeSamplePersistent: false,
    SourcePackageIsTradeSample: false,
    IsDonation: bool("IsDonation"),
    IsDonationPersistent: false,
    SourcePackageIsDonation: false,
    IsTestingSample: bool("IsTestingSample"),
    IsProcessValidationTestingSample: false,
    ProductRequiresRemediation: bool("ProductRequiresRemediation"),
    ContainsRemediatedProduct: false,
    RemediationDate: null,
    ProductRequiresDecontamination: false,
    ContainsDecontaminatedProduct: false,
    DecontaminationDate: null,
    ReceivedDateTime: str("ReceivedDateTime"),
    ReceivedFromManifestNumber: str("ReceivedFromManifestNumber"),
    ReceivedFromFacilityLicenseNumber: receivedFrom,
    ReceivedFromFacilityName: receivedFrom === null ? null : facilityByLicense(scope.world, receivedFrom)?.name ?? null,
    ...holdFlags(scope.world, p),
    ArchivedDate: str("ArchivedDate"),
    IsFinished: bool("IsFinished"),
    FinishedDate: str("FinishedDate"),
    IsFinishedGood: false,
    IsOnTrip: false,
    IsOnRetailerDelivery: false,
    LastModified: str("LastModified"),
    Item: {
      Id: num("ItemId"),
      Name: p.item_name,
      ProductCategoryName: p.item_category,
      ProductCategoryType: null,
      ...details,
      IsUsed: true
    }
  }
}

/** One row of `GET /packages/v2/{id}/source/harvests`. */
export const sourceHarvest = (h: Harvest.Harvest): Json => ({
  HarvestId: Number(h.provider_harvest_id),
  HarvestName: h.harvest_name,
  HarvestStartDate: h.harvested_date
})

/** One tag of `GET /tags/v2/package/available`. */
export const availableTag = (label: string, n: number): Json => ({ Id: n, Label: label })

// ------------------------------------------------------------------ lab results

/** The rows of `GET /labtests/v2/results?packageId=` for a package: one per test of each result. */
export const labRows = (scope: Scope, p: Package.Package): Array<Json> =>
  packageView(scope.data, p).lab_results.flatMap((r: LabResult.LabResult) =>
    r.results.map((t) => ({
      PackageId: Number(p.provider_package_id),
      LabTestResultId: Number(r.provider_result_id),
      LabFacilityLicenseNumber: r.lab_license,
      LabFacilityName: r.lab_name,
      SourcePackageLabel: p.tag,
      ProductName: p.item_name,
      ProductCategoryName: p.item_category,
      TestPerformedDate: r.test_date,
      OverallPassed: r.overall_passed,
      RevokedDate: null,
      LabTestResultDocumentFileId: null,
      ResultReleased: true,
      ResultReleaseDateTime: r.result_date === null ? null : `${r.result_date}T00:00:00+00:00`,
      ExpirationDateTime: null,
      TestTypeName: t.name,
      TestPassed: t.passed,
      TestResultLevel: t.value,
      TestComment: t.notes,
      TestInformationalOnly: false,
      LabTestDetailRevokedDate: null
    }))
  )

// ------------------------------------------------------------------ plants and harvests

const harvestOfPlant = (world: World, plantId: string): Harvest.Harvest | undefined =>
  world.facilities.flatMap((d) => d.harvests).find((h) => h.source_plant_ids.some((id) => id === plantId))

/** One plant of `GET /plants/v2/vegetative|flowering|inactive|{id}|{label}`. */
export const plant = (scope: Scope, p: Plant.Plant): Json => {
  const harvest = harvestOfPlant(scope.world, p.id)
  const place = locationNamed(scope.data, p.location)
  const harvestedUnit = harvest === undefined ? null : harvest.unit_of_measure
  return {
    Id: Number(p.provider_plant_id),
    Label: p.tag,
    State: p.harvest_date === null ? "Tracked" : "Harvested",
    GrowthPhase: p.growth_phase === "vegetative"
      ? "Vegetative"
      : p.growth_phase === "flowering"
      ? "Flowering"
      : "Immature",
    GroupTagTypeMax: 0,
    TagTypeMax: 0,
    PlantBatchId: p.plant_batch_id === null ? null : Number(p.plant_batch_id),
    PlantBatchName: null,
    PlantBatchTypeId: null,
    PlantBatchTypeName: null,
    StrainId: strainId(scope.data, p.strain_name),
    StrainName: p.strain_name,
    LocationId: idOrNull(place?.provider_location_id),
    LocationName: p.location,
    LocationTypeName: place?.location_type ?? null,
    PatientLicenseNumber: null,
    HarvestId: harvest === undefined ? null : Number(harvest.provider_harvest_id),
    HarvestedUnitOfWeightName: harvestedUnit,
    HarvestedUnitOfWeightAbbreviation: harvestedUnit === null ? null : abbreviationOf(harvestedUnit),
    HarvestedWetWeight: null,
    HarvestCount: harvest === undefined ? 0 : 1,
    IsOnHold: false,
    IsOnTrip: false,
    PlantedDate: p.planted_date,
    VegetativeDate: p.vegetative_date,
    FloweringDate: p.flowering_date,
    HarvestedDate: p.harvest_date,
    DestroyedDate: null,
    DestroyedNote: null,
    DestroyedByUserName: null,
    LastModified: lastModified(scope.world, p.id)
  }
}

/** One harvest of `GET /harvests/v2/active|{id}`. */
export const harvest = (scope: Scope, h: Harvest.Harvest): Json => ({
  Id: Number(h.provider_harvest_id),
  Name: h.harvest_name,
  HarvestType: h.harvest_type,
  SourceStrainCount: 1,
  SourceStrainNames: h.strain_name,
  Strains: [],
  DryingLocationId: null,
  DryingLocationName: null,
  DryingLocationTypeName: null,
  PatientLicenseNumber: null,
  CurrentWeight: h.current_weight,
  TotalWasteWeight: h.total_waste_weight,
  PlantCount: h.plant_count,
  TotalWetWeight: null,
  TotalRestoredWeight: 0,
  PackageCount: scope.world.facilities.reduce(
    (n, d) =>
      n + d.packages.filter((p) => p.source_package_ids.length === 0 && p.source_harvest_ids.includes(h.id)).length,
    0
  ),
  TotalPackagedWeight: null,
  UnitOfWeightName: h.unit_of_measure,
  LabTestingState: null,
  LabTestingStateDate: null,
  IsOnHold: false,
  HarvestStartDate: h.harvested_date,
  FinishedDate: null,
  ArchivedDate: null,
  IsOnTrip: false,
  LastModified: lastModified(scope.world, h.id)
})

// ------------------------------------------------------------------ transfers

/** Metrc's manifest id of a transfer (a template's id without its `template-` prefix). */
export const numericTransferId = (providerId: string): number => Number(providerId.replace(/^template-/, ""))

/** The id of a transfer's one delivery (the emulator's transfers have one delivery each). */
export const deliveryIdOf = (transferId: number): number => transferId * 10 + 1

const returnTimes = {
  EstimatedReturnDepartureDateTime: null,
  ActualReturnDepartureDateTime: null,
  EstimatedReturnArrivalDateTime: null,
  ActualReturnArrivalDateTime: null
}

/**
 * One row of `GET /transfers/v2/incoming|outgoing|rejected|templates/outgoing`: the transfer with
 * its (only) delivery. A template's row has no manifest, no delivery and placeholder local times.
 */
export const transferRow = (scope: Scope, seen: Seen): Json => {
  const t = seen.transfer
  const template = seen.data.template
  const id = numericTransferId(t.provider_transfer_id)
  const arrived = t.status === "received" || t.status === "rejected"
  const state = scope.world.state
  return {
    Id: id,
    ManifestNumber: template ? null : t.manifest_number,
    ShipmentLicenseType: 0,
    ShipperFacilityLicenseNumber: t.shipper_facility,
    ShipperFacilityName: facilityByLicense(scope.world, t.shipper_facility)?.name ?? null,
    Name: template ? `Template ${id}` : null,
    TransporterFacilityLicenseNumber: null,
    TransporterFacilityName: t.transporter,
    DriverName: t.driver_name,
    DriverOccupationalLicenseNumber: "",
    DriverVehicleLicenseNumber: "",
    VehicleMake: t.vehicle_info,
    VehicleModel: null,
    VehicleLicensePlateNumber: null,
    DeliveryCount: 1,
    ReceivedDeliveryCount: arrived ? 1 : 0,
    PackageCount: t.packages.length,
    ReceivedPackageCount: t.status === "received" ? t.packages.length : 0,
    ContainsPlantPackage: false,
    ContainsProductPackage: t.packages.length > 0,
    ContainsTradeSample: false,
    ContainsDonation: false,
    ContainsTestingSample: false,
    ContainsProductRequiresRemediation: false,
    ContainsRemediatedProductPackage: false,
    IsVoided: false,
    CreatedDateTime: null,
    CreatedByUserName: null,
    LastModified: lastModified(scope.world, t.id),
    DeliveryId: template ? 0 : deliveryIdOf(id),
    RecipientFacilityLicenseNumber: template ? null : t.recipient_facility,
    RecipientFacilityName: template ? null : facilityByLicense(scope.world, t.recipient_facility)?.name ?? null,
    ShipmentTypeName: template ? null : t.transfer_type,
    ShipmentTransactionType: template ? null : "Standard",
    EstimatedDepartureDateTime: template ? NO_LOCAL_TIME : local(t.estimated_departure, state),
    ActualDepartureDateTime: withOffset(t.actual_departure),
    EstimatedArrivalDateTime: template ? NO_LOCAL_TIME : local(t.estimated_arrival, state),
    ActualArrivalDateTime: withOffset(t.actual_arrival),
    DeliveryPackageCount: t.packages.length,
    DeliveryReceivedPackageCount: t.status === "received" ? t.packages.length : 0,
    ReceivedDateTime: arrived ? withOffset(t.actual_arrival) : null,
    ...returnTimes
  }
}

/** The one delivery of a template (`GET /transfers/v2/templates/outgoing/{id}/deliveries`). */
export const templateDelivery = (scope: Scope, seen: Seen): Json => {
  const t = seen.transfer
  const state = scope.world.state
  return {
    Id: deliveryIdOf(numericTransferId(t.provider_transfer_id)),
    RecipientFacilityLicenseNumber: t.recipient_facility,
    RecipientFacilityName: facilityByLicense(scope.world, t.recipient_facility)?.name ?? null,
    ShipmentTypeName: t.transfer_type,
    ShipmentTransactionType: "Standard",
    EstimatedDepartureDateTime: local(t.estimated_departure, state),
    ActualDepartureDateTime: null,
    EstimatedArrivalDateTime: local(t.estimated_arrival, state),
    ActualArrivalDateTime: null,
    GrossWeight: null,
    GrossUnitOfWeightId: null,
    GrossUnitOfWeightName: null,
    PlannedRoute: null,
    DeliveryPackageCount: t.packages.length,
    DeliveryReceivedPackageCount: 0,
    ReceivedDateTime: null,
    ...returnTimes,
    RejectedPackagesReturned: false
  }
}

/** The packages of a transfer's delivery (`GET /transfers/v2/deliveries/{id}/packages`, and templates'). */
export const deliveryPackages = (scope: Scope, seen: Seen): Array<Json> =>
  seen.transfer.packages.map((line) => {
    const found = packageByTag(scope.world, line.tag)
    const m = (found?.metadata ?? {}) as Json
    const received = seen.transfer.status === "received"
    return {
      PackageId: found === undefined ? null : Number(found.provider_package_id),
      PackageLabel: line.tag,
      PackageType: "Product",
      SourceHarvestNames: typeof m.SourceHarvestNames === "string" ? m.SourceHarvestNames : null,
      SourcePackageLabels: found === undefined || found.source_package_ids.length === 0
        ? null
        : found.source_package_ids.map((id) => providerIdOf("package", id)).join(","),
      ItemId: typeof m.ItemId === "number" ? m.ItemId : null,
      ItemName: line.item_name,
      ItemCategoryName: found?.item_category ?? null,
      ItemStrainName: found?.item_strain ?? null,
      ItemBrandName: null,
      ItemUnitCbdPercent: null,
      ItemUnitCbdContent: null,
      ItemUnitCbdContentUnitOfMeasureName: null,
      ItemUnitCbdContentDose: null,
      ItemUnitCbdContentDoseUnitOfMeasureName: null,
      ItemUnitThcPercent: null,
      ItemUnitThcContent: null,
      ItemUnitThcContentUnitOfMeasureName: null,
      ItemUnitThcContentDose: null,
      ItemUnitThcContentDoseUnitOfMeasureName: null,
      ItemUnitVolume: null,
      ItemUnitVolumeUnitOfMeasureName: null,
      ItemUnitWeight: null,
      ItemUnitWeightUnitOfMeasureName: null,
      ItemServingSize: null,
      ItemSupplyDurationDays: null,
      ItemUnitQuantity: null,
      ItemUnitQuantityUnitOfMeasureName: null,
      LabTestingState: found?.lab_testing_state ?? null,
      ProductionBatchNumber: null,
      IsTradeSample: false,
      IsTradeSamplePersistent: false,
      SourcePackageIsTradeSample: false,
      IsDonation: false,
      SourcePackageIsDonation: false,
      IsTestingSample: false,
      ProductRequiresRemediation: false,
      ContainsRemediatedProduct: false,
      RemediationDate: null,
      ShipmentPackageState: received ? "Accepted" : seen.transfer.status === "rejected" ? "Rejected" : "Shipped",
      ShippedQuantity: line.quantity,
      ShippedUnitOfMeasureName: line.unit_of_measure,
      GrossUnitOfWeightName: null,
      ReceivedQuantity: received ? line.quantity : null,
      ReceivedUnitOfMeasureName: received ? line.unit_of_measure : null
    }
  })

// ------------------------------------------------------------------ sales and sales deliveries

/** A transaction (line) of a receipt or a delivery. */
const transaction = (
  scope: Scope,
  line: {
    readonly tag: string
    readonly item_name: string
    readonly quantity: number
    readonly unit_of_measure: string
    readonly total: number
  },
  stamps: { readonly recorded: string | null; readonly modified: string }
): Json => {
  const found = packageByTag(scope.world, line.tag)
  return {
    PackageId: found === undefined ? null : Number(found.provider_package_id),
    PackageLabel: line.tag,
    ProductName: line.item_name,
    ProductCategoryName: found?.item_category ?? null,
    ItemStrainName: found?.item_strain ?? null,
    QuantitySold: line.quantity,
    UnitOfMeasureName: line.unit_of_measure,
    UnitOfMeasureAbbreviation: abbreviationOf(line.unit_of_measure),
    TotalPrice: line.total,
    SalesDeliveryState: null,
    ArchivedDate: null,
    RecordedDateTime: stamps.recorded,
    RecordedByUserName: null,
    LastModified: stamps.modified
  }
}

/**
 * One receipt of `GET /sales/v2/receipts/active|inactive` (`detail` false: Metrc's list rows carry
 * an empty `Transactions`) or `GET /sales/v2/receipts/{id}` (`detail` true: its line items).
 */
export const sale = (scope: Scope, s: Sale.Sale, detail: boolean): Json => {
  const stamps = { recorded: withOffset(s.sale_date), modified: lastModified(scope.world, s.id) }
  return {
    Id: Number(s.provider_sale_id),
    ReceiptNumber: s.receipt_number,
    ExternalReceiptNumber: null,
    SalesDateTime: local(s.sale_date, scope.world.state),
    SalesCustomerType: s.customer_type,
    PatientLicenseNumber: s.patient_license,
    CaregiverLicenseNumber: s.caregiver_license,
    IdentificationMethod: null,
    PatientRegistrationLocationId: null,
    TotalPackages: s.items.length,
    TotalPrice: s.total_price,
    Transactions: detail ? s.items.map((i) => transaction(scope, i, stamps)) : [],
    IsFinal: true,
    ArchivedDate: null,
    RecordedDateTime: stamps.recorded,
    RecordedByUserName: null,
    LastModified: stamps.modified
  }
}

/** One delivery of `GET /sales/v2/deliveries/active|{id}` (the world knows no prices of deliveries). */
export const delivery = (scope: Scope, d: SalesDelivery.SalesDelivery): Json => {
  const stamps = { recorded: withOffset(d.delivery_date), modified: lastModified(scope.world, d.id) }
  const state = scope.world.state
  return {
    Id: Number(d.provider_delivery_id),
    DeliveryNumber: null,
    FacilityLicenseNumber: null,
    FacilityName: null,
    TransporterFacilityId: null,
    TransporterFacilityLicenseNumber: null,
    TransporterFacilityName: null,
    SalesDateTime: local(d.delivery_date, state),
    SalesCustomerType: d.customer_type,
    PatientLicenseNumber: d.patient_license,
    ConsumerId: null,
    DriverEmployeeId: null,
    DriverName: null,
    DriversLicenseNumber: null,
    VehicleMake: null,
    VehicleModel: null,
    VehicleLicensePlateNumber: null,
    RecipientName: d.recipient_name,
    RecipientAddressStreet1: null,
    RecipientAddressStreet2: null,
    RecipientAddressCity: d.recipient_city,
    RecipientAddressCounty: null,
    RecipientAddressState: d.recipient_state,
    RecipientAddressPostalCode: null,
    PlannedRoute: null,
    Direction: "Undesignated",
    EstimatedDepartureDateTime: null,
    ActualDepartureDateTime: null,
    EstimatedArrivalDateTime: local(d.delivery_date, state),
    ActualArrivalDateTime: null,
    ...returnTimes,
    TotalPackages: d.items.length,
    TotalPrice: 0,
    AcceptedDateTime: null,
    Transactions: d.items.map((i) =>
      transaction(scope, {
        tag: providerIdOf("package", i.package_id),
        item_name: i.item_name,
        quantity: i.quantity,
        unit_of_measure: i.unit_of_measure,
        total: 0
      }, stamps)
    ),
    CompletedDateTime: d.status === "Completed" ? withOffset(d.delivery_date) : null,
    SalesDeliveryState: d.status,
    VoidedDate: null,
    RecordedDateTime: stamps.recorded,
    RecordedByUserName: null,
    LastModified: stamps.modified
  }
}

// ------------------------------------------------------------------ writes

/** The answer of a v2 POST: the ids created, in the order posted. */
export const writeResult = (ids: ReadonlyArray<number>): Json => ({ Ids: [...ids], Warnings: null })
