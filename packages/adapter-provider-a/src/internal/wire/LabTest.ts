import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** One row of `GET /labtests/v2/results?packageId=`: one test of one lab result. */
export const LabTestResultRow = struct({
  PackageId: Schema.Finite,
  LabTestResultId: Schema.Finite,
  LabFacilityLicenseNumber: opt(Schema.String),
  LabFacilityName: Schema.String,
  SourcePackageLabel: opt(Schema.String),
  ProductName: opt(Schema.String),
  ProductCategoryName: opt(Schema.String),
  TestPerformedDate: opt(MetrcTime),
  OverallPassed: Schema.Boolean,
  RevokedDate: opt(MetrcTime),
  ResultReleased: opt(Schema.Boolean),
  ResultReleaseDateTime: opt(MetrcTime),
  ExpirationDateTime: opt(MetrcTime),
  TestTypeName: Schema.String,
  TestPassed: Schema.Boolean,
  TestResultLevel: opt(Schema.Finite),
  TestComment: opt(Schema.String),
  TestInformationalOnly: opt(Schema.Boolean),
  LabTestDetailRevokedDate: opt(MetrcTime)
})
export type LabTestResultRow = typeof LabTestResultRow.Type

/** One test of `POST /labtests/v2/record`. */
export const RecordResult = struct({
  LabTestTypeName: Schema.String,
  Quantity: Schema.Finite,
  Passed: Schema.Boolean,
  Notes: opt(Schema.String)
})

/** One object of the `POST /labtests/v2/record` array. */
export const RecordLabTest = struct({
  Label: Schema.String,
  ResultDate: Schema.String,
  DocumentFileName: opt(Schema.String),
  DocumentFileBase64: opt(Schema.String),
  Results: Schema.Array(RecordResult)
})
export type RecordLabTest = typeof RecordLabTest.Type
