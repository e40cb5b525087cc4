/**
 * What a connection can do: one boolean per feature of the state system, fixed by the
 * provider descriptor for the connection's state.
 *
 * The spec lists the flags up to `sales_deliveries`; Tracebridge adds `transfers`,
 * `patients` and `locations` (see `docs/capabilities.md`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * @since 0.1.0
 * @category schemas
 */
export const Capabilities = Schema.Struct({
  plant_batches: Schema.Boolean,
  mother_plants: Schema.Boolean.annotations({ description: "The mother plant phase" }),
  vegetative: Schema.Boolean,
  flowering: Schema.Boolean,
  harvests: Schema.Boolean,
  packages: Schema.Boolean,
  items: Schema.Boolean,
  strains: Schema.Boolean,
  labs: Schema.Boolean,
  sales: Schema.Boolean,
  sales_deliveries: Schema.Boolean.annotations({ description: "Gates the /sales_deliveries endpoint" }),
  transfers: Schema.Boolean,
  patients: Schema.Boolean,
  locations: Schema.Boolean
}).annotations({ identifier: "Capabilities", description: "What the connection's state system supports" })

/**
 * @since 0.1.0
 * @category models
 */
export interface Capabilities extends Schema.Schema.Type<typeof Capabilities> {}

/**
 * A capability flag name.
 *
 * @since 0.1.0
 * @category models
 */
export type Flag = keyof Capabilities

/**
 * Every flag, in the order of the spec (then Tracebridge's own).
 *
 * @since 0.1.0
 * @category constants
 */
export const flags: ReadonlyArray<Flag> = Object.keys(Capabilities.fields) as Array<Flag>

/**
 * All flags set to `value`, then the given overrides: the way descriptors spell a state's row.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (value: boolean, overrides: Partial<Capabilities> = {}): Capabilities => {
  const out = {} as Record<Flag, boolean>
  for (const flag of flags) out[flag] = overrides[flag] ?? value
  return out
}
