import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/** A transaction (line) of a sales receipt or delivery. */
export const SaleTransaction = struct({
  PackageId: opt(Schema.Finite),
  PackageLabel: Schema.String,
  ProductName: Schema.String,
  ProductCategoryName: opt(Schema.String),
  ItemStrainName: opt(Schema.String),
  QuantitySold: Schema.Finite,
  UnitOfMeasureName: Schema.String,
  UnitOfMeasureAbbreviation: opt(Schema.String),
  TotalPrice: Schema.Finite,
  SalesDeliveryState: opt(Schema.String),
  ArchivedDate: opt(MetrcTime),
  RecordedDateTime: opt(MetrcTime),
  LastModified: opt(MetrcTime)
})
export type SaleTransaction = typeof SaleTransaction.Type

/** A receipt of `GET /sales/v2/receipts/active|inactive|{id}`. */
export const SalesReceipt = struct({
  Id: Schema.Finite,
  ReceiptNumber: opt(Schema.String),
  ExternalReceiptNumber: opt(Schema.String),
  SalesDateTime: MetrcTime,
  SalesCustomerType: Schema.String,
  PatientLicenseNumber: opt(Schema.String),
  CaregiverLicenseNumber: opt(Schema.String),
  IdentificationMethod: opt(Schema.String),
  TotalPackages: opt(Schema.Finite),
  TotalPrice: Schema.Finite,
  Transactions: Schema.optionalWith(Schema.Array(SaleTransaction), { default: () => [] }),
  IsFinal: opt(Schema.Boolean),
  ArchivedDate: opt(MetrcTime),
  RecordedDateTime: opt(MetrcTime),
  LastModified: opt(MetrcTime)
})
export type SalesReceipt = typeof SalesReceipt.Type

/** A delivery of `GET /sales/v2/deliveries/active|inactive|{id}`. */
export const SalesDeliveryV2 = struct({
  Id: Schema.Finite,
  DeliveryNumber: opt(Schema.String),
  SalesDateTime: opt(MetrcTime),
  SalesCustomerType: Schema.String,
  PatientLicenseNumber: opt(Schema.String),
  DriverName: opt(Schema.String),
  RecipientName: opt(Schema.String),
  RecipientAddressCity: opt(Schema.String),
  RecipientAddressState: opt(Schema.String),
  EstimatedArrivalDateTime: opt(MetrcTime),
  ActualArrivalDateTime: opt(MetrcTime),
  CompletedDateTime: opt(MetrcTime),
  SalesDeliveryState: opt(Schema.String),
  TotalPrice: opt(Schema.Finite),
  Transactions: Schema.optionalWith(Schema.Array(SaleTransaction), { default: () => [] }),
  VoidedDate: opt(MetrcTime),
  LastModified: opt(MetrcTime)
})
export type SalesDeliveryV2 = typeof SalesDeliveryV2.Type
