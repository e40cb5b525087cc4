/**
 * A strain (genetics) of a facility (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { StrainId } from "./Ids.js"
import { facilityScoped, nullableString, ProviderObjectId } from "./internal/fields.js"
import { Percentage } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Strain = Schema.Struct({
  id: StrainId,
  name: Schema.String,
  indica_percentage: Schema.NullOr(Percentage),
  sativa_percentage: Schema.NullOr(Percentage),
  genetics: nullableString,
  ...facilityScoped,
  provider_strain_id: ProviderObjectId
}).annotations({ identifier: "Strain", description: "A strain" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Strain extends Schema.Schema.Type<typeof Strain> {}
