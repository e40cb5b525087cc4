/**
 * `sync_inventory_room` and `sync_plant_room`: the rooms of a location.
 */
import { Schema } from "effect"
import { IdString, OptionalFlag, syncColumns } from "./Common.js"

/** One room row (both tables share the shape). */
export const Room = Schema.Struct({
  roomid: IdString,
  name: Schema.String,
  location: IdString,
  quarantine: OptionalFlag,
  ...syncColumns
})
/** A room row. */
export type Room = typeof Room.Type
