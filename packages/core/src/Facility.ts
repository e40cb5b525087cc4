/**
 * A licensed facility reachable through a connection (spec §2).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { FacilityId } from "./Ids.js"
import { nullableString, ProviderObjectId } from "./internal/fields.js"
import { ProviderName, UsState } from "./ProviderName.js"
import { FreeForm, IsoDate } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category schemas
 */
export const FacilityStatus = Schema.Literal("active", "inactive").annotations({ identifier: "FacilityStatus" })

/**
 * @since 0.1.0
 * @category models
 */
export type FacilityStatus = typeof FacilityStatus.Type

/**
 * The connected user's role at the facility, where the provider reports it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const UserPermissions = Schema.Struct({
  is_owner: Schema.Boolean,
  is_manager: Schema.Boolean,
  is_financial_contact: Schema.Boolean,
  occupations: Schema.Array(Schema.String)
}).annotations({ identifier: "UserPermissions" })

/**
 * @since 0.1.0
 * @category models
 */
export interface UserPermissions extends Schema.Schema.Type<typeof UserPermissions> {}

/**
 * The capability tags a facility can carry.
 *
 * @since 0.1.0
 * @category constants
 */
export const capabilityTags = [
  "cultivation",
  "manufacturing",
  "testing",
  "harvests",
  "packages",
  "sales",
  "sales_deliveries",
  "labs",
  "transfers",
  "patients"
] as const

/**
 * One capability tag of a facility.
 *
 * @since 0.1.0
 * @category schemas
 */
export const CapabilityTag = Schema.Literal(...capabilityTags).annotations({
  identifier: "CapabilityTag",
  description: "What a facility's licence lets it do"
})

/**
 * @since 0.1.0
 * @category models
 */
export type CapabilityTag = typeof CapabilityTag.Type

/**
 * @since 0.1.0
 * @category schemas
 */
export const Facility = Schema.Struct({
  id: FacilityId,
  name: Schema.String.annotations({ description: "Licensed name" }),
  display_name: nullableString,
  alias: nullableString,
  license_number: Schema.String,
  license_type: Schema.String.annotations({ description: "Free text, e.g. dispensary, grower, testing facility" }),
  license_start_date: Schema.NullOr(IsoDate),
  license_end_date: Schema.NullOr(IsoDate),
  address: nullableString,
  city: nullableString,
  zip: nullableString,
  state: UsState,
  status: FacilityStatus,
  credentialed_date: Schema.NullOr(IsoDate),
  support_activation_date: Schema.NullOr(IsoDate),
  support_expiration_date: Schema.NullOr(IsoDate),
  provider: ProviderName,
  provider_facility_id: ProviderObjectId,
  user_permissions: Schema.NullOr(UserPermissions),
  capabilities: Schema.Array(CapabilityTag).annotations({ description: "What the facility's licence lets it do" }),
  facility_type: Schema.NullOr(FreeForm).annotations({ description: "Provider-specific facility-type flags" })
}).annotations({ identifier: "Facility", description: "A licensed facility" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Facility extends Schema.Schema.Type<typeof Facility> {}
