/**
 * The `sync_*` tables the adapter reads, and the answer of a sync action: `{ success: 1,
 * <table>: rows }`, where rows come as an array or as an object keyed by row number.
 */
import { Schema } from "effect"
import { Employee } from "./Employee.js"
import { Inventory } from "./Inventory.js"
import { Manifest, ManifestStop, ManifestStopItem, TransferLine } from "./Manifest.js"
import { Plant, PlantDerivative } from "./Plant.js"
import { QaSample } from "./QaSample.js"
import { Room } from "./Room.js"
import { Sale } from "./Sale.js"
import { Vehicle } from "./Vehicle.js"
import { Vendor } from "./Vendor.js"

/** Rows as an array, or as an object keyed by row number (BioTrack does both); missing is empty. */
export const Rows = <A, I>(row: Schema.Schema<A, I>) =>
  Schema.optionalWith(
    Schema.transform(
      Schema.Union(Schema.Array(row), Schema.Record({ key: Schema.String, value: row }), Schema.Null),
      Schema.Array(Schema.typeSchema(row)),
      {
        strict: true,
        decode: (u) => (u === null ? [] : Array.isArray(u) ? u : Object.values(u)),
        encode: (rows) => rows
      }
    ),
    { default: () => [] }
  )

/** Each sync action and the tables its answer holds. */
export const syncActions = {
  sync_vendor: { vendor: Vendor },
  sync_employee: { employee: Employee },
  sync_vehicle: { vehicle: Vehicle },
  sync_inventory: { inventory: Inventory },
  sync_plant: { plant: Plant },
  sync_plant_derivative: { plant_derivative: PlantDerivative },
  sync_inventory_room: { inventory_room: Room },
  sync_plant_room: { plant_room: Room },
  sync_manifest: { manifest: Manifest, manifest_stop_data: ManifestStop, manifest_stop_items: ManifestStopItem },
  sync_inventory_transfer: { inventory_transfer: TransferLine },
  sync_inventory_transfer_inbound: { inventory_transfer_inbound: TransferLine },
  sync_inventory_qa_sample: { inventory_qa_sample: QaSample },
  sync_sale: { sale: Sale }
} as const

/** A sync action name. */
export type SyncAction = keyof typeof syncActions

type Tables<T extends Record<string, Schema.Schema<any, any>>> = {
  readonly [K in keyof T]: ReadonlyArray<T[K]["Type"]>
}

/** The decoded tables of a sync action. */
export type SyncTables<S extends SyncAction> = Tables<(typeof syncActions)[S]>

/** The answer schema of a sync action. */
export const syncAnswer = <S extends SyncAction>(action: S): Schema.Schema<SyncTables<S>, any> => {
  const fields: Record<string, any> = {}
  for (const [table, row] of Object.entries(syncActions[action])) fields[table] = Rows(row as Schema.Schema<any, any>)
  return Schema.Struct(fields) as any
}
