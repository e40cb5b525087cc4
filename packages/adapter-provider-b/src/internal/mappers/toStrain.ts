/**
 * A strain name → Strain. Classic BioTrack has no strain object: strains are the distinct
 * (trimmed) `strain` values that inventory and plants use, and carry no genetics.
 */
import type { Strain } from "@tracebridge/core"
import type { Context } from "./context.js"
import { id, PROVIDER } from "./context.js"

export const toStrain = (name: string, ctx: Context): Strain.Strain => ({
  id: id("strain", name),
  name,
  indica_percentage: null,
  sativa_percentage: null,
  genetics: null,
  facility_id: ctx.facility_id,
  provider: PROVIDER,
  provider_strain_id: name
})
