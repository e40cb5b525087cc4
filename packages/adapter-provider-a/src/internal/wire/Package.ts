import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** The item nested in a package. */
export const PackageItem = struct({
  Id: opt(Schema.Finite),
  Name: Schema.String,
  ProductCategoryName: opt(Schema.String),
  StrainId: opt(Schema.Finite),
  StrainName: opt(Schema.String),
  UnitWeight: opt(Schema.Finite),
  UnitWeightUnitOfMeasureName: opt(Schema.String)
})

/**
 * A package of `GET /packages/v2/active|onhold|inactive|{id}|{label}` (and v1, whose flat
 * `ProductName`/`ProductCategoryName`/`ItemStrainName` predate the nested `Item`).
 */
export const PackageV2 = struct({
  Id: Schema.Finite,
  Label: Schema.String,
  PackageType: opt(Schema.String),
  SourceHarvestCount: opt(Schema.Finite),
  SourceHarvestNames: opt(Schema.String),
  SourcePackageCount: opt(Schema.Finite),
  SourcePackageLabels: opt(Schema.String),
  LocationId: opt(Schema.Finite),
  LocationName: opt(Schema.String),
  LocationTypeName: opt(Schema.String),
  SublocationName: opt(Schema.String),
  Quantity: Schema.Finite,
  OriginalPackageQuantity: opt(Schema.Finite),
  UnitOfMeasureName: Schema.String,
  UnitOfMeasureAbbreviation: opt(Schema.String),
  PatientLicenseNumber: opt(Schema.String),
  ItemFromFacilityLicenseNumber: opt(Schema.String),
  ItemFromFacilityName: opt(Schema.String),
  Note: opt(Schema.String),
  PackagedDate: opt(MetrcTime),
  ExpirationDate: opt(MetrcTime),
  SellByDate: opt(MetrcTime),
  UseByDate: opt(MetrcTime),
  InitialLabTestingState: opt(Schema.String),
  LabTestingState: opt(Schema.String),
  LabTestingStateDate: opt(MetrcTime),
  IsProductionBatch: opt(Schema.Boolean),
  ProductionBatchNumber: opt(Schema.String),
  IsTradeSample: opt(Schema.Boolean),
  IsDonation: opt(Schema.Boolean),
  IsTestingSample: opt(Schema.Boolean),
  ProductRequiresRemediation: opt(Schema.Boolean),
  ReceivedDateTime: opt(MetrcTime),
  ReceivedFromManifestNumber: opt(Schema.String),
  ReceivedFromFacilityLicenseNumber: opt(Schema.String),
  IsOnHold: opt(Schema.Boolean),
  // Metrc's other holds (investigations and recalls) stop a package as surely as IsOnHold.
  IsOnHoldCombined: opt(Schema.Boolean),
  IsOnInvestigation: opt(Schema.Boolean),
  IsOnInvestigationHold: opt(Schema.Boolean),
  IsOnInvestigationRecall: opt(Schema.Boolean),
  IsOnRecall: opt(Schema.Boolean),
  IsOnRecallCombined: opt(Schema.Boolean),
  ArchivedDate: opt(MetrcTime),
  IsFinished: opt(Schema.Boolean),
  FinishedDate: opt(MetrcTime),
  LastModified: opt(MetrcTime),
  Item: opt(PackageItem),
  ProductName: opt(Schema.String),
  ProductCategoryName: opt(Schema.String),
  ItemStrainName: opt(Schema.String)
})
export type PackageV2 = typeof PackageV2.Type

/** A row of `GET /packages/v2/{id}/source/harvests`. */
export const PackageSourceHarvest = struct({
  HarvestId: Schema.Finite,
  HarvestName: opt(Schema.String),
  HarvestStartDate: opt(MetrcTime)
})
export type PackageSourceHarvest = typeof PackageSourceHarvest.Type

/** A tag of `GET /tags/v2/package/available`. */
export const AvailableTag = struct({
  Id: opt(Schema.Finite),
  Label: Schema.String
})

/** An ingredient of `POST /packages/v2/` (a source package and what to draw from it). */
export const Ingredient = struct({
  Package: Schema.String,
  Quantity: Schema.Finite,
  UnitOfMeasure: Schema.String
})

/** One object of the `POST /packages/v2/` array (create a package from other packages). */
export const CreatePackage = struct({
  Tag: Schema.String,
  Location: opt(Schema.String),
  Sublocation: opt(Schema.String),
  Item: opt(Schema.String),
  Quantity: Schema.Finite,
  UnitOfMeasure: Schema.String,
  PatientLicenseNumber: opt(Schema.String),
  Note: opt(Schema.String),
  IsProductionBatch: Schema.optional(Schema.Boolean),
  ProductionBatchNumber: opt(Schema.String),
  IsDonation: Schema.optional(Schema.Boolean),
  IsTradeSample: Schema.optional(Schema.Boolean),
  IsFinishedGood: Schema.optional(Schema.Boolean),
  ProductRequiresRemediation: Schema.optional(Schema.Boolean),
  UseSameItem: Schema.optional(Schema.Boolean),
  ActualDate: Schema.String,
  ExpirationDate: opt(Schema.String),
  SellByDate: opt(Schema.String),
  UseByDate: opt(Schema.String),
  Ingredients: Schema.Array(Ingredient)
})
export type CreatePackage = typeof CreatePackage.Type
