/**
 * `sync_vehicle`: the vehicles of the login, which `inventory_manifest` names (`vehicle_id`).
 * BioTrack lists the table in its sync order, but no payload was found: the columns
 * (`vehicle_id`, `nickname`, `make`, `model`, `color`, `plate`, `vin`, `location`) are inferred
 * from BioTrack's naming. Only `vehicle_id` is required; any other column may be missing, and
 * text columns may come as numbers.
 */
import { Schema } from "effect"
import { IdString, OptionalLabel, syncColumns } from "./Common.js"

/** One vehicle row. */
export const Vehicle = Schema.Struct({
  vehicle_id: IdString,
  nickname: OptionalLabel,
  make: OptionalLabel,
  model: OptionalLabel,
  color: OptionalLabel,
  plate: OptionalLabel,
  vin: OptionalLabel,
  location: Schema.optionalWith(Schema.NullOr(IdString), { default: () => null }),
  ...syncColumns
})
/** A vehicle row. */
export type Vehicle = typeof Vehicle.Type
