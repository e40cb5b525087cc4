import type { Sale, SalesDelivery } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDateTime } from "../time.js"
import type { SalesDeliveryV2, SalesReceipt } from "../wire/Sale.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, PROVIDER, required, text, zoneOf } from "./context.js"
import { packageId } from "./toPackage.js"

const round = (n: number) => Math.round(n * 10_000) / 10_000

/**
 * A receipt of `GET /sales/v2/receipts/…`. Metrc's read model has no discounts (they exist only in
 * the write body), so `discount` and `total_discount` are 0 and `unit_price` is the line total over
 * the quantity.
 */
export const toSale = (wire: SalesReceipt, ctx: MapContext): Sale.Sale => ({
  id: Ids.make("sale", PROVIDER, String(wire.Id)),
  receipt_number: text(wire.ReceiptNumber) ?? text(wire.ExternalReceiptNumber) ?? String(wire.Id),
  sale_date: required(toDateTime(wire.SalesDateTime, zoneOf(ctx)), "SalesDateTime"),
  customer_type: wire.SalesCustomerType,
  patient_license: text(wire.PatientLicenseNumber),
  caregiver_license: text(wire.CaregiverLicenseNumber),
  items: wire.Transactions.map((t) => ({
    package_id: packageId(t.PackageLabel),
    tag: t.PackageLabel,
    item_name: t.ProductName,
    quantity: t.QuantitySold,
    unit_of_measure: t.UnitOfMeasureName,
    unit_price: t.QuantitySold === 0 ? 0 : round(t.TotalPrice / t.QuantitySold),
    discount: 0,
    total: t.TotalPrice
  })),
  total_price: wire.TotalPrice,
  total_discount: 0,
  facility_id: facilityIdOf(ctx),
  provider: PROVIDER,
  provider_sale_id: String(wire.Id)
})

/**
 * A delivery of `GET /sales/v2/deliveries/…`. `delivery_date` is when it was completed, else
 * when it arrived, else when it is expected.
 */
export const toSalesDelivery = (wire: SalesDeliveryV2, ctx: MapContext): SalesDelivery.SalesDelivery => {
  const zone = zoneOf(ctx)
  return {
    id: Ids.make("sales_delivery", PROVIDER, String(wire.Id)),
    recipient_name: text(wire.RecipientName),
    recipient_city: text(wire.RecipientAddressCity),
    recipient_state: text(wire.RecipientAddressState),
    delivery_date: toDateTime(wire.CompletedDateTime, zone) ?? toDateTime(wire.ActualArrivalDateTime, zone) ??
      toDateTime(wire.EstimatedArrivalDateTime, zone),
    customer_type: wire.SalesCustomerType,
    patient_license: text(wire.PatientLicenseNumber),
    status: text(wire.SalesDeliveryState),
    items: wire.Transactions.map((t) => ({
      package_id: packageId(t.PackageLabel),
      item_name: t.ProductName,
      unit_of_measure: t.UnitOfMeasureName,
      quantity: t.QuantitySold
    })),
    facility_id: facilityIdOf(ctx),
    provider: PROVIDER,
    provider_delivery_id: String(wire.Id)
  }
}
