import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** An item of `GET /items/v2/active|{id}`. */
export const ItemV2 = struct({
  Id: Schema.Finite,
  Name: Schema.String,
  ProductCategoryName: Schema.String,
  ProductCategoryType: opt(Schema.Unknown),
  QuantityType: opt(Schema.Unknown),
  UnitOfMeasureName: Schema.String,
  ApprovalStatus: opt(Schema.Unknown),
  StrainId: opt(Schema.Finite),
  StrainName: opt(Schema.String),
  UnitWeight: opt(Schema.Finite),
  UnitWeightUnitOfMeasureName: opt(Schema.String)
})
export type ItemV2 = typeof ItemV2.Type

/** A strain of `GET /strains/v2/active|{id}`. */
export const StrainV2 = struct({
  Id: Schema.Finite,
  Name: Schema.String,
  TestingStatus: opt(Schema.String),
  ThcLevel: opt(Schema.Finite),
  CbdLevel: opt(Schema.Finite),
  IndicaPercentage: opt(Schema.Finite),
  SativaPercentage: opt(Schema.Finite),
  Genetics: opt(Schema.String)
})
export type StrainV2 = typeof StrainV2.Type

/** A location of `GET /locations/v2/active|{id}`. */
export const LocationV2 = struct({
  Id: Schema.Finite,
  Name: Schema.String,
  LocationTypeId: opt(Schema.Finite),
  LocationTypeName: opt(Schema.String)
})
export type LocationV2 = typeof LocationV2.Type

/** A patient of `GET /patients/v2/active|{id}`. */
export const PatientV2 = struct({
  PatientId: Schema.Finite,
  LicenseNumber: opt(Schema.String),
  RegistrationDate: opt(MetrcTime),
  LicenseEffectiveStartDate: opt(MetrcTime),
  LicenseEffectiveEndDate: opt(MetrcTime),
  RecommendedPlants: opt(Schema.Finite),
  RecommendedSmokableQuantity: opt(Schema.Finite),
  HasSalesLimitExemption: opt(Schema.Boolean)
})
export type PatientV2 = typeof PatientV2.Type

/** A unit of `GET /unitsofmeasure/v2/active`. */
export const UnitOfMeasure = struct({
  QuantityType: Schema.String,
  Name: Schema.String,
  Abbreviation: Schema.String
})
