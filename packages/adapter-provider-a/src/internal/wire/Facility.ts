import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** `License` of a facility. */
export const License = struct({
  Number: Schema.String,
  StartDate: opt(MetrcTime),
  EndDate: opt(MetrcTime),
  LicenseType: Schema.String
})

/** One row of `GET /facilities/v2/` (a bare array). */
export const FacilityV2 = struct({
  HireDate: opt(MetrcTime),
  IsOwner: opt(Schema.Boolean),
  IsManager: opt(Schema.Boolean),
  IsFinancialContact: opt(Schema.Boolean),
  Occupations: opt(Schema.Array(Schema.String)),
  Name: Schema.String,
  Alias: opt(Schema.String),
  DisplayName: opt(Schema.String),
  CredentialedDate: opt(MetrcTime),
  SupportActivationDate: opt(MetrcTime),
  SupportExpirationDate: opt(MetrcTime),
  SupportLastPaidDate: opt(MetrcTime),
  FacilityType: opt(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  License
})
export type FacilityV2 = typeof FacilityV2.Type
