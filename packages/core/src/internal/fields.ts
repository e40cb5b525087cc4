import { Schema } from "effect"
import { FacilityId } from "../Ids.js"
import { ProviderName } from "../ProviderName.js"

/** The provider string id field: the identifier in the provider's own system. */
export const ProviderObjectId = Schema.String.pipe(Schema.minLength(1))

/** `facility_id` and `provider`, which every facility-level resource carries. */
export const facilityScoped = {
  facility_id: FacilityId,
  provider: ProviderName
} as const

export const nullableString = Schema.NullOr(Schema.String)
