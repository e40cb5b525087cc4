/**
 * `sync_plant` and `sync_plant_derivative` (the output rows of plant harvest and cure
 * transactions; classic BioTrack has no harvest object).
 */
import { Schema } from "effect"
import {
  Barcode,
  Code,
  IdString,
  OptionalEpoch,
  OptionalFlag,
  OptionalNumber,
  OptionalText,
  StringNumber,
  syncColumns
} from "./Common.js"

/** One `plant` row. */
export const Plant = Schema.Struct({
  id: Barcode,
  strain: Schema.String,
  room: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  location: IdString,
  state: Code,
  mother: OptionalFlag,
  parentid: OptionalText,
  converted: OptionalFlag,
  harvestscheduled: OptionalFlag,
  harvestscheduletime: OptionalEpoch,
  removescheduled: OptionalFlag,
  removescheduletime: OptionalEpoch,
  removereason: OptionalText,
  seized: OptionalFlag,
  ...syncColumns
})
/** A plant row. */
export type Plant = typeof Plant.Type

/** One `plant_derivative` row: what a harvest (its `transactionid`) took from one plant. */
export const PlantDerivative = Schema.Struct({
  plantid: Barcode,
  inventoryid: Schema.optionalWith(Schema.NullOr(Barcode), { default: () => null }),
  inventorytype: Code,
  weight: StringNumber,
  wholeweight: OptionalNumber,
  harvestcollect: OptionalFlag,
  curecollect: OptionalFlag,
  collectadditional: OptionalFlag,
  room: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  location: IdString,
  ...syncColumns
})
/** A plant derivative row. */
export type PlantDerivative = typeof PlantDerivative.Type
