import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** A harvest batch of `GET /harvests/v2/active|inactive|{id}`. */
export const HarvestV2 = struct({
  Id: Schema.Number,
  Name: Schema.String,
  HarvestType: Schema.String,
  SourceStrainCount: opt(Schema.Number),
  SourceStrainNames: opt(Schema.String),
  Strains: opt(Schema.Array(Schema.Unknown)),
  DryingLocationName: opt(Schema.String),
  CurrentWeight: Schema.Number,
  TotalWasteWeight: Schema.Number,
  PlantCount: Schema.Number,
  TotalWetWeight: opt(Schema.Number),
  PackageCount: opt(Schema.Number),
  UnitOfWeightName: Schema.String,
  LabTestingState: opt(Schema.String),
  IsOnHold: opt(Schema.Boolean),
  HarvestStartDate: MetrcTime,
  FinishedDate: opt(MetrcTime),
  ArchivedDate: opt(MetrcTime),
  LastModified: opt(MetrcTime)
})
export type HarvestV2 = typeof HarvestV2.Type
