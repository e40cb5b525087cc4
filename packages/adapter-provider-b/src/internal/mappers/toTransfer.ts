/**
 * manifest header + one stop + its items (+ transfer lines) → Transfer.
 */
import type { Transfer } from "@tracebridge/core"
import type { Manifest, ManifestStop, ManifestStopItem, TransferLine } from "../wire/Manifest.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"
import { inventoryType, isoDateTime } from "./vocabulary.js"

/** The rows of one manifest stop. */
export interface ManifestStopRows {
  readonly manifest: Manifest
  readonly stop: ManifestStop
  readonly items: ReadonlyArray<ManifestStopItem>
  /** `inventory_transfer` rows of this stop. */
  readonly outbound?: ReadonlyArray<TransferLine>
  /** `inventory_transfer_inbound` rows of this stop (the receipt). */
  readonly inbound?: ReadonlyArray<TransferLine>
}

/** A transfer is one stop of a manifest: `<manifestid>/<stopnumber>`. */
export const transferKey = (manifestid: string, stop: string): string => `${manifestid}/${stop}`

/**
 * The status: `rejected` when every received line came back as a refund; `received` when the
 * manifest is fulfilled or the stop has receipt lines; `in_transit` once the manifest has a
 * completion (departure) date; `pending` before that.
 */
export const transferStatus = (rows: ManifestStopRows): Transfer.TransferStatus => {
  const inbound = rows.inbound ?? []
  if (inbound.length > 0 && inbound.every((l) => l.is_refund)) return "rejected"
  if (rows.manifest.fulfilled || inbound.length > 0) return "received"
  if (rows.manifest.completion_date !== null) return "in_transit"
  return "pending"
}

const text = (...parts: ReadonlyArray<string | null>): string | null => {
  const kept = parts.map((p) => p?.trim() ?? "").filter((p) => p.length > 0)
  return kept.length === 0 ? null : kept.join(" ")
}

export const toTransfer = (rows: ManifestStopRows, ctx: Context, license?: string): Transfer.Transfer => {
  const { manifest, stop } = rows
  const status = transferStatus(rows)
  const lines = [...(rows.outbound ?? []), ...(rows.inbound ?? [])]
  const unitOf = (barcode: string) => {
    const line = lines.find((l) => l.inventoryid === barcode)
    return line === undefined ? "Grams" : inventoryType(line.inventorytype).unit
  }
  const inboundTimes = (rows.inbound ?? []).map((l) => l.sessiontime).filter((t): t is number => t !== null)
  const outgoing = license === undefined || manifest.origination_license_number === license
  return {
    id: id("transfer", transferKey(manifest.manifestid, stop.stopnumber)),
    manifest_number: manifest.manifestid,
    transfer_type: outgoing ? "Outgoing" : "Incoming",
    shipper_facility: manifest.origination_license_number,
    recipient_facility: stop.license_number,
    packages: rows.items.map((item) => ({
      package_id: id("package", item.inventoryid),
      tag: item.inventoryid,
      item_name: item.description?.trim() || item.inventoryid,
      quantity: item.quantity,
      unit_of_measure: unitOf(item.inventoryid)
    })),
    status,
    estimated_departure: isoDateTime(stop.depart_time),
    estimated_arrival: isoDateTime(stop.arrive_time),
    actual_departure: status === "pending" ? null : isoDateTime(manifest.completion_date),
    actual_arrival: status === "received" && inboundTimes.length > 0 ? isoDateTime(Math.max(...inboundTimes)) : null,
    transporter: null,
    driver_name: text(manifest.transporter_name),
    vehicle_info: text(manifest.transporter_vehicle_details, manifest.transporter_vehicle_identification),
    facility_id: ctx.facility_id,
    provider: PROVIDER,
    provider_transfer_id: transferKey(manifest.manifestid, stop.stopnumber)
  }
}
