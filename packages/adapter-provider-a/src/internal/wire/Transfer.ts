import { Schema } from "effect"
import { MetrcTime, opt, struct } from "./common.js"

/**
 * A row of `GET /transfers/v2/incoming|outgoing|rejected` and of
 * `GET /transfers/v2/templates/outgoing`: one transfer × one of its deliveries.
 */
export const TransferRow = struct({
  Id: Schema.Finite,
  ManifestNumber: opt(Schema.String),
  ShipperFacilityLicenseNumber: opt(Schema.String),
  ShipperFacilityName: opt(Schema.String),
  Name: opt(Schema.String),
  TransporterFacilityLicenseNumber: opt(Schema.String),
  TransporterFacilityName: opt(Schema.String),
  DriverName: opt(Schema.String),
  DriverOccupationalLicenseNumber: opt(Schema.String),
  VehicleMake: opt(Schema.String),
  VehicleModel: opt(Schema.String),
  VehicleLicensePlateNumber: opt(Schema.String),
  DeliveryCount: opt(Schema.Finite),
  ReceivedDeliveryCount: opt(Schema.Finite),
  PackageCount: opt(Schema.Finite),
  ReceivedPackageCount: opt(Schema.Finite),
  IsVoided: opt(Schema.Boolean),
  CreatedDateTime: opt(MetrcTime),
  LastModified: opt(MetrcTime),
  DeliveryId: opt(Schema.Finite),
  RecipientFacilityLicenseNumber: opt(Schema.String),
  RecipientFacilityName: opt(Schema.String),
  ShipmentTypeName: opt(Schema.String),
  ShipmentTransactionType: opt(Schema.String),
  EstimatedDepartureDateTime: opt(MetrcTime),
  ActualDepartureDateTime: opt(MetrcTime),
  EstimatedArrivalDateTime: opt(MetrcTime),
  ActualArrivalDateTime: opt(MetrcTime),
  DeliveryPackageCount: opt(Schema.Finite),
  DeliveryReceivedPackageCount: opt(Schema.Finite),
  ReceivedDateTime: opt(MetrcTime)
})
export type TransferRow = typeof TransferRow.Type

/** A delivery of `GET /transfers/v2/{id}/deliveries` or `…/templates/outgoing/{id}/deliveries`. */
export const TransferDelivery = struct({
  Id: Schema.Finite,
  RecipientFacilityLicenseNumber: opt(Schema.String),
  RecipientFacilityName: opt(Schema.String),
  ShipmentTypeName: opt(Schema.String),
  EstimatedDepartureDateTime: opt(MetrcTime),
  ActualDepartureDateTime: opt(MetrcTime),
  EstimatedArrivalDateTime: opt(MetrcTime),
  ActualArrivalDateTime: opt(MetrcTime),
  DeliveryPackageCount: opt(Schema.Finite),
  DeliveryReceivedPackageCount: opt(Schema.Finite),
  ReceivedDateTime: opt(MetrcTime)
})
export type TransferDelivery = typeof TransferDelivery.Type

/** A package of `GET /transfers/v2/deliveries/{id}/packages` (and the template equivalent). */
export const DeliveryPackage = struct({
  PackageId: opt(Schema.Finite),
  PackageLabel: Schema.String,
  PackageType: opt(Schema.String),
  ItemId: opt(Schema.Finite),
  ItemName: Schema.String,
  ItemCategoryName: opt(Schema.String),
  ItemStrainName: opt(Schema.String),
  LabTestingState: opt(Schema.String),
  ShipmentPackageState: opt(Schema.String),
  ShippedQuantity: Schema.Finite,
  ShippedUnitOfMeasureName: Schema.String,
  ReceivedQuantity: opt(Schema.Finite),
  ReceivedUnitOfMeasureName: opt(Schema.String)
})
export type DeliveryPackage = typeof DeliveryPackage.Type

/** A package line of a template destination. */
export const TemplatePackage = struct({
  PackageLabel: Schema.String,
  WholesalePrice: opt(Schema.Finite)
})

/** A destination of a template. */
export const TemplateDestination = struct({
  RecipientLicenseNumber: Schema.String,
  TransferTypeName: Schema.String,
  PlannedRoute: opt(Schema.String),
  EstimatedDepartureDateTime: opt(Schema.String),
  EstimatedArrivalDateTime: opt(Schema.String),
  Transporters: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [] }),
  Packages: Schema.Array(TemplatePackage)
})

/** One object of the `POST /transfers/v2/templates/outgoing` array. */
export const CreateTemplate = struct({
  Name: Schema.String,
  TransporterFacilityLicenseNumber: opt(Schema.String),
  DriverOccupationalLicenseNumber: opt(Schema.String),
  DriverName: opt(Schema.String),
  DriverLicenseNumber: opt(Schema.String),
  PhoneNumberForQuestions: opt(Schema.String),
  VehicleMake: opt(Schema.String),
  VehicleModel: opt(Schema.String),
  VehicleLicensePlateNumber: opt(Schema.String),
  Destinations: Schema.Array(TemplateDestination)
})
export type CreateTemplate = typeof CreateTemplate.Type
