import type { LabResult, Package } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDate } from "../time.js"
import type { PackageV2 } from "../wire/Package.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, labState, PROVIDER, required, splitLabels, text } from "./context.js"

/** Provider fields kept in `metadata` (when not null), under their Metrc names. */
const metadataFields = [
  "PackageType",
  "LocationName",
  "LocationTypeName",
  "SublocationName",
  "OriginalPackageQuantity",
  "UnitOfMeasureAbbreviation",
  "PatientLicenseNumber",
  "ItemFromFacilityLicenseNumber",
  "ItemFromFacilityName",
  "Note",
  "SellByDate",
  "UseByDate",
  "InitialLabTestingState",
  "LabTestingStateDate",
  "IsProductionBatch",
  "ProductionBatchNumber",
  "IsTradeSample",
  "IsDonation",
  "IsTestingSample",
  "ProductRequiresRemediation",
  "ReceivedDateTime",
  "ReceivedFromManifestNumber",
  "ReceivedFromFacilityLicenseNumber",
  "SourceHarvestNames",
  "ArchivedDate",
  "IsFinished",
  "FinishedDate",
  "LastModified"
] as const satisfies ReadonlyArray<keyof PackageV2>

/** What only other calls know: the package's lab results and its source harvests. */
export interface PackageExtras {
  readonly labResults?: ReadonlyArray<LabResult.LabResult>
  readonly sourceHarvestIds?: ReadonlyArray<number>
}

/**
 * Any of Metrc's holds: administrative, investigation or recall (each stops the package). The
 * `is_on_hold` filter and the write checks use this same reading, so that they agree with the field.
 */
export const onHold = (wire: {
  readonly IsOnHold?: boolean | null | undefined
  readonly IsOnHoldCombined?: boolean | null | undefined
  readonly IsOnInvestigation?: boolean | null | undefined
  readonly IsOnInvestigationHold?: boolean | null | undefined
  readonly IsOnInvestigationRecall?: boolean | null | undefined
  readonly IsOnRecall?: boolean | null | undefined
  readonly IsOnRecallCombined?: boolean | null | undefined
}): boolean =>
  wire.IsOnHold === true || wire.IsOnHoldCombined === true || wire.IsOnInvestigation === true ||
  wire.IsOnInvestigationHold === true || wire.IsOnInvestigationRecall === true || wire.IsOnRecall === true ||
  wire.IsOnRecallCombined === true

/** The Tracebridge id of a Metrc package: derived from its label (tag), which every cross-reference uses. */
export const packageId = (label: string) => Ids.make("package", PROVIDER, label)

/**
 * A package of `GET /packages/v2/…` (v1 packages too). Source packages come from
 * `SourcePackageLabels`; source harvests and lab results only from other calls (`extras`).
 */
export const toPackage = (wire: PackageV2, ctx: MapContext, extras: PackageExtras = {}): Package.Package => {
  const sources = splitLabels(wire.SourcePackageLabels)
  const metadata: Record<string, unknown> = {}
  for (const field of metadataFields) {
    const value = wire[field]
    if (value !== null && value !== undefined && value !== "") metadata[field] = value
  }
  if (wire.Item?.Id !== null && wire.Item?.Id !== undefined) metadata.ItemId = wire.Item.Id
  return {
    id: packageId(wire.Label),
    tag: wire.Label,
    source_tag: sources[0] ?? null,
    item_name: required(wire.Item?.Name ?? wire.ProductName, "Item.Name"),
    item_category: required(wire.Item?.ProductCategoryName ?? wire.ProductCategoryName, "Item.ProductCategoryName"),
    item_strain: text(wire.Item?.StrainName ?? wire.ItemStrainName),
    quantity: wire.Quantity,
    unit_of_measure: wire.UnitOfMeasureName,
    lab_testing_state: labState(wire.LabTestingState),
    is_on_hold: onHold(wire),
    packaged_date: toDate(wire.PackagedDate),
    expiration_date: toDate(wire.ExpirationDate),
    facility_id: facilityIdOf(ctx),
    provider: PROVIDER,
    provider_package_id: String(wire.Id),
    source_harvest_ids: (extras.sourceHarvestIds ?? []).map((id) => Ids.make("harvest", PROVIDER, String(id))),
    source_package_ids: sources.map(packageId),
    lab_results: [...(extras.labResults ?? [])],
    metadata
  }
}
