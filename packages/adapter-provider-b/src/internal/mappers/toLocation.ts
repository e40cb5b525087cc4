/**
 * inventory_room / plant_room row → Location. Room ids repeat across the two tables, so the
 * provider id is `inventory:<roomid>` or `plant:<roomid>`.
 */
import type { Location } from "@tracebridge/core"
import type { Room } from "../wire/Room.js"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"

export type RoomKind = "inventory" | "plant"

export const locationKey = (kind: RoomKind, roomid: string): string => `${kind}:${roomid}`

export const toLocation = (row: Room, kind: RoomKind, ctx: Context): Location.Location => ({
  id: id("location", locationKey(kind, row.roomid)),
  name: row.name,
  location_type: row.quarantine ? "Quarantine Room" : kind === "inventory" ? "Inventory Room" : "Plant Room",
  facility_id: ctx.facility_id,
  provider: PROVIDER,
  provider_location_id: locationKey(kind, row.roomid)
})
