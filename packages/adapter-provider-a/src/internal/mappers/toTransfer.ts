import type { Transfer } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import { toDateTime } from "../time.js"
import type { DeliveryPackage, TransferRow } from "../wire/Transfer.js"
import type { MapContext } from "./context.js"
import { facilityIdOf, PROVIDER, text, zoneOf } from "./context.js"
import { packageId } from "./toPackage.js"

/** Where a transfer row came from. */
export type TransferSource = "incoming" | "outgoing" | "rejected" | "template"

/** The provider id of a transfer: the manifest id, or `template-<id>` for an outgoing template. */
export const transferProviderId = (id: number, source: TransferSource) =>
  source === "template" ? `template-${id}` : String(id)

const present = (s: string | null): s is string => s !== null

/** Licence numbers compared as text: any shape (`123-ABC`, `3a-X0001`, `NM-…`), case and spaces aside. */
export const sameLicense = (a: string | null | undefined, b: string): boolean =>
  text(a)?.trim().toUpperCase() === b.trim().toUpperCase()

/**
 * A transfer's direction as seen from the facility of `license`. The list a row came from decides
 * (`/incoming` is incoming; `/outgoing` and templates are outgoing); `/rejected` holds manifests of
 * either direction (the facility's, rejected by their recipients, and those it rejected itself),
 * and a row of no known list (the embedding API) may come from either: there the facility is the
 * shipper of an outgoing transfer and the recipient of an incoming one. Outgoing when neither.
 */
export const transferDirection = (
  rows: ReadonlyArray<TransferRow>,
  license: string | undefined,
  source: TransferSource | undefined
): Transfer.TransferDirection => {
  if (source === "incoming") return "incoming"
  if (source === "outgoing" || source === "template") return "outgoing"
  if (license !== undefined && text(license) !== null) {
    if (rows.some((r) => sameLicense(r.ShipperFacilityLicenseNumber, license))) return "outgoing"
    if (rows.some((r) => sameLicense(r.RecipientFacilityLicenseNumber, license))) return "incoming"
  }
  return "outgoing"
}

/**
 * Metrc has no transfer status; it is derived, in this order:
 * 1. `rejected` when the row came from `/transfers/v2/rejected`, or every shipped package was rejected;
 * 2. `received` when every delivery has a `ReceivedDateTime`;
 * 3. `in_transit` when a delivery has an `ActualDepartureDateTime`;
 * 4. `pending` otherwise (templates are always pending).
 */
export const transferStatus = (
  rows: ReadonlyArray<TransferRow>,
  packages: ReadonlyArray<DeliveryPackage>,
  source: TransferSource,
  zone: string
): Transfer.TransferStatus => {
  if (source === "template") return "pending"
  if (source === "rejected") return "rejected"
  if (packages.length > 0 && packages.every((p) => p.ShipmentPackageState === "Rejected")) return "rejected"
  if (rows.length > 0 && rows.every((r) => toDateTime(r.ReceivedDateTime, zone) !== null)) return "received"
  if (rows.some((r) => toDateTime(r.ActualDepartureDateTime, zone) !== null)) return "in_transit"
  return "pending"
}

const earliest = (values: ReadonlyArray<string | null>): string | null => values.filter(present).sort()[0] ?? null
const latest = (values: ReadonlyArray<string | null>): string | null => values.filter(present).sort().at(-1) ?? null

/**
 * A transfer from its rows (one per delivery, all with the same `Id`) and the packages of those
 * deliveries. Several deliveries merge into one transfer: recipients are joined, departures take
 * the earliest time and arrivals the latest.
 */
export const toTransfer = (
  rows: ReadonlyArray<TransferRow>,
  packages: ReadonlyArray<DeliveryPackage>,
  ctx: MapContext & { readonly source: TransferSource }
): Transfer.Transfer => {
  const first = rows[0]
  if (first === undefined) throw new Error("toTransfer needs at least one row")
  const zone = zoneOf(ctx)
  const recipients = [...new Set(rows.map((r) => text(r.RecipientFacilityLicenseNumber)).filter(present))]
  const vehicle = [first.VehicleMake, first.VehicleModel, first.VehicleLicensePlateNumber].map(text).filter(present)
  return {
    id: Ids.make("transfer", PROVIDER, transferProviderId(first.Id, ctx.source)),
    manifest_number: text(first.ManifestNumber) ?? "",
    transfer_type: text(first.ShipmentTypeName) ?? "Transfer",
    shipper_facility: text(first.ShipperFacilityLicenseNumber) ?? text(first.ShipperFacilityName) ?? "",
    recipient_facility: recipients.join(", "),
    packages: packages.map((p) => ({
      package_id: packageId(p.PackageLabel),
      tag: p.PackageLabel,
      item_name: p.ItemName,
      quantity: p.ShippedQuantity,
      unit_of_measure: p.ShippedUnitOfMeasureName
    })),
    status: transferStatus(rows, packages, ctx.source, zone),
    estimated_departure: earliest(rows.map((r) => toDateTime(r.EstimatedDepartureDateTime, zone))),
    estimated_arrival: latest(rows.map((r) => toDateTime(r.EstimatedArrivalDateTime, zone))),
    actual_departure: earliest(rows.map((r) => toDateTime(r.ActualDepartureDateTime, zone))),
    actual_arrival: latest(rows.map((r) => toDateTime(r.ActualArrivalDateTime, zone))),
    transporter: text(first.TransporterFacilityName) ?? text(first.TransporterFacilityLicenseNumber),
    driver_name: text(first.DriverName),
    vehicle_info: vehicle.length > 0 ? vehicle.join(" ") : null,
    facility_id: facilityIdOf(ctx),
    provider: PROVIDER,
    provider_transfer_id: transferProviderId(first.Id, ctx.source)
  }
}
