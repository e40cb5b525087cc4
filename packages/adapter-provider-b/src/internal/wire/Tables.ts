/**
 * The `sync_*` tables the adapter reads, and the answer of a sync action: `{ success: 1,
 * <table>: rows }`, where rows come as an array or as an object keyed by row number.
 */
import { ParseResult, Schema } from "effect"
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

/** A table's field in a sync answer: `Rows` over the table's row schema. */
type RowsField<R> = R extends Schema.Schema<infer A, infer I> ? ReturnType<typeof Rows<A, I>> : never

/** The fields of a sync action's answer: one `Rows` field per table. */
export type SyncAnswerFields<S extends SyncAction> = {
  readonly [K in keyof (typeof syncActions)[S]]: RowsField<(typeof syncActions)[S][K]>
}

/** The answer schema of a sync action. */
export const syncAnswer = <S extends SyncAction>(action: S): Schema.Struct<SyncAnswerFields<S>> => {
  const fields: Record<string, RowsField<Schema.Schema<any, any>>> = {}
  for (const [table, row] of Object.entries<Schema.Schema<any, any>>(syncActions[action])) fields[table] = Rows(row)
  // The record is built from the action's table list at run time, so TypeScript sees one field
  // type for every key; `SyncAnswerFields<S>` states each table's own.
  return Schema.Struct(fields as SyncAnswerFields<S>)
}

/** Rows of any shape, as an array or an object keyed by row number; missing is empty. */
const RawRows = Schema.optionalWith(
  Schema.transform(
    Schema.Union(
      Schema.Array(Schema.Unknown),
      Schema.Record({ key: Schema.String, value: Schema.Unknown }),
      Schema.Null
    ),
    Schema.Array(Schema.Unknown),
    {
      strict: true,
      decode: (u) => (u === null ? [] : Array.isArray(u) ? u : Object.values(u)),
      encode: (rows) => rows
    }
  ),
  { default: () => [] }
)

/** The answer of a sync action with its rows undecoded: each row is read on its own (tolerant reads). */
export const rawAnswer = (action: SyncAction) => {
  const fields: Record<string, typeof RawRows> = {}
  for (const table of Object.keys(syncActions[action])) fields[table] = RawRows
  return Schema.Struct(fields)
}

/** A row left out of a table: BioTrack's id of it (or its position) and why. */
export interface SkippedRow {
  readonly upstream_id: string
  readonly reason: string
  readonly field: string
}

/** A row's BioTrack id: the first of its id columns that it has, else its table and position. */
const upstreamIdOf = (table: string, row: unknown, position: number): string => {
  if (typeof row === "object" && row !== null) {
    const r = row as Record<string, unknown>
    for (const key of ["id", "inventoryid", "barcode_id", "manifestid", "transactionid", "location", "employee_id"]) {
      const value = r[key]
      if (typeof value === "string" || typeof value === "number") return String(value)
    }
  }
  return `${table} row ${position}`
}

/**
 * Reads each row of a sync answer with its table's row schema: the rows that decode, and those
 * left out with why (DECISIONS "Tolerant reads": one odd row never fails the table).
 */
export const decodeRows = <S extends SyncAction>(
  action: S,
  raw: { readonly [table: string]: ReadonlyArray<unknown> }
): { readonly tables: SyncTables<S>; readonly skipped: ReadonlyArray<SkippedRow> } => {
  const tables: Record<string, Array<unknown>> = {}
  const skipped: Array<SkippedRow> = []
  for (
    const [table, schema] of Object.entries(syncActions[action]) as Array<[string, Schema.Schema<unknown, unknown>]>
  ) {
    const decode = Schema.decodeUnknownEither(schema)
    tables[table] = []
    ;(raw[table] ?? []).forEach((row, i) => {
      const decoded = decode(row)
      if (decoded._tag === "Right") {
        tables[table]!.push(decoded.right)
        return
      }
      const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
      const field = issue === undefined || issue.path.length === 0 ? "(row)" : issue.path.map(String).join(".")
      skipped.push({
        upstream_id: upstreamIdOf(table, row, i),
        field,
        reason: `${action} ${table}: ${field}: ${issue?.message ?? "unexpected shape"}`
      })
    })
  }
  return { tables: tables as unknown as SyncTables<S>, skipped }
}
