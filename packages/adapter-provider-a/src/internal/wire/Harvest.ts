import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** A harvest batch of `GET /harvests/v2/active|inactive|{id}`. */
export const HarvestV2 = struct({
  Id: Schema.Finite,
  Name: Schema.String,
  HarvestType: Schema.String,
  SourceStrainCount: opt(Schema.Finite),
  SourceStrainNames: opt(Schema.String),
  Strains: opt(Schema.Array(Schema.Unknown)),
  DryingLocationName: opt(Schema.String),
  CurrentWeight: Schema.Finite,
  TotalWasteWeight: Schema.Finite,
  PlantCount: Schema.Finite,
  TotalWetWeight: opt(Schema.Finite),
  PackageCount: opt(Schema.Finite),
  UnitOfWeightName: Schema.String,
  LabTestingState: opt(Schema.String),
  IsOnHold: opt(Schema.Boolean),
  HarvestStartDate: MetrcTime,
  FinishedDate: opt(MetrcTime),
  ArchivedDate: opt(MetrcTime),
  LastModified: opt(MetrcTime)
})
export type HarvestV2 = typeof HarvestV2.Type
