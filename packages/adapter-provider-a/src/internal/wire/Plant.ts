import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** A plant of `GET /plants/v2/vegetative|flowering|inactive|{id}|{label}`. */
export const PlantV2 = struct({
  Id: Schema.Finite,
  Label: Schema.String,
  State: opt(Schema.String),
  GrowthPhase: Schema.String,
  PlantBatchId: opt(Schema.Finite),
  PlantBatchName: opt(Schema.String),
  PlantBatchTypeName: opt(Schema.String),
  StrainId: opt(Schema.Finite),
  StrainName: Schema.String,
  LocationId: opt(Schema.Finite),
  LocationName: opt(Schema.String),
  PatientLicenseNumber: opt(Schema.String),
  HarvestId: opt(Schema.Finite),
  HarvestCount: opt(Schema.Finite),
  IsOnHold: opt(Schema.Boolean),
  PlantedDate: opt(MetrcTime),
  VegetativeDate: opt(MetrcTime),
  FloweringDate: opt(MetrcTime),
  HarvestedDate: opt(MetrcTime),
  DestroyedDate: opt(MetrcTime),
  LastModified: opt(MetrcTime)
})
export type PlantV2 = typeof PlantV2.Type

/**
 * A plant batch of `GET /plantbatches/v2/active|inactive|{id}`: immature plants (clones and
 * seedlings) counted together. Tracebridge has no plant-batch resource; plants name their batch.
 */
export const PlantBatchV2 = struct({
  Id: Schema.Finite,
  Name: Schema.String,
  PlantBatchTypeName: opt(Schema.String),
  LocationName: opt(Schema.String),
  StrainId: opt(Schema.Finite),
  StrainName: opt(Schema.String),
  PatientLicenseNumber: opt(Schema.String),
  UntrackedCount: opt(Schema.Finite),
  TrackedCount: opt(Schema.Finite),
  PackagedCount: opt(Schema.Finite),
  DestroyedCount: opt(Schema.Finite),
  SourcePackageLabel: opt(Schema.String),
  SourcePlantLabel: opt(Schema.String),
  PlantedDate: opt(MetrcTime),
  IsOnHold: opt(Schema.Boolean),
  LastModified: opt(MetrcTime)
})
export type PlantBatchV2 = typeof PlantBatchV2.Type
