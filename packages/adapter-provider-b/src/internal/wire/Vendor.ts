/**
 * `sync_vendor`: licensees (BioTrack "locations"); the login's own are its facilities.
 */
import { Schema } from "effect"
import { Code, IdString, OptionalFlag, OptionalText, syncColumns } from "./Common.js"

/** One `vendor` row. */
export const Vendor = Schema.Struct({
  ubi: IdString,
  location: IdString,
  name: Schema.String,
  locationtype: Schema.optionalWith(Schema.NullOr(Code), { default: () => null }),
  address1: OptionalText,
  address2: OptionalText,
  city: OptionalText,
  state: OptionalText,
  zip: OptionalText,
  producer: OptionalFlag,
  processor: OptionalFlag,
  retail: OptionalFlag,
  medical: OptionalFlag,
  ...syncColumns
})
/** A vendor row. */
export type Vendor = typeof Vendor.Type
