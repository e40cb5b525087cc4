/**
 * A location (room) inside a facility (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { LocationId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Location = Schema.Struct({
  id: LocationId,
  name: Schema.String,
  location_type: nullableString,
  ...facilityScoped,
  provider_location_id: ProviderObjectId
}).annotations({ identifier: "Location", description: "A room or area inside a facility" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Location extends Schema.Schema.Type<typeof Location> {}
