/**
 * Units of measure: the names Tracebridge reports (`Grams`, `Ounces`, `Each`, …), their
 * abbreviations, and conversion between units of the same kind. Splits use it to draw a quantity
 * in one unit from sources measured in another; units of different kinds never convert.
 *
 * @since 0.1.0
 */
import { Option } from "effect"

/**
 * @since 0.1.0
 * @category models
 */
export type Kind = "weight" | "volume" | "count"

interface Unit {
  readonly name: string
  readonly kind: Kind
  /** Size in the kind's base unit (grams, millilitres, each). */
  readonly factor: number
  readonly aliases: ReadonlyArray<string>
}

const units: ReadonlyArray<Unit> = [
  { name: "Grams", kind: "weight", factor: 1, aliases: ["g", "gram", "grams"] },
  { name: "Milligrams", kind: "weight", factor: 0.001, aliases: ["mg", "milligram", "milligrams"] },
  { name: "Kilograms", kind: "weight", factor: 1000, aliases: ["kg", "kilogram", "kilograms"] },
  { name: "Ounces", kind: "weight", factor: 28.349523125, aliases: ["oz", "ounce", "ounces"] },
  { name: "Pounds", kind: "weight", factor: 453.59237, aliases: ["lb", "lbs", "pound", "pounds"] },
  { name: "Milliliters", kind: "volume", factor: 1, aliases: ["ml", "milliliter", "milliliters", "millilitres"] },
  { name: "Liters", kind: "volume", factor: 1000, aliases: ["l", "liter", "liters", "litres"] },
  {
    name: "Fluid Ounces",
    kind: "volume",
    factor: 29.5735295625,
    aliases: ["fl oz", "floz", "fluid ounce", "fluid ounces"]
  },
  { name: "Each", kind: "count", factor: 1, aliases: ["ea", "each", "unit", "units", "count"] }
]

const byAlias = new Map<string, Unit>()
for (const unit of units) {
  byAlias.set(unit.name.toLowerCase(), unit)
  for (const alias of unit.aliases) byAlias.set(alias, unit)
}

/**
 * The canonical name of a unit given by name or abbreviation, case-insensitively
 * (`"g"` → `"Grams"`, `"OUNCES"` → `"Ounces"`).
 *
 * @since 0.1.0
 * @category parsing
 */
export const canonical = (unit: string): Option.Option<string> =>
  Option.map(Option.fromNullable(byAlias.get(unit.trim().toLowerCase())), (u) => u.name)

/**
 * The kind of a unit.
 *
 * @since 0.1.0
 * @category parsing
 */
export const kindOf = (unit: string): Option.Option<Kind> =>
  Option.map(Option.fromNullable(byAlias.get(unit.trim().toLowerCase())), (u) => u.kind)

/**
 * `quantity` in `from` expressed in `to`, or `None` when either unit is unknown or they measure
 * different things (weight, volume, count). Results are rounded to 6 decimals.
 *
 * @since 0.1.0
 * @category conversions
 */
export const convert = (quantity: number, from: string, to: string): Option.Option<number> => {
  const a = byAlias.get(from.trim().toLowerCase())
  const b = byAlias.get(to.trim().toLowerCase())
  if (a === undefined || b === undefined || a.kind !== b.kind) return Option.none()
  return Option.some(Math.round((quantity * a.factor) / b.factor * 1e6) / 1e6)
}

/**
 * The largest quantity a write accepts, in any unit: anything larger is a mistake, not a package.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_QUANTITY = 1_000_000_000

/**
 * The smallest step a quantity in `unit` can take: 1 for a count (`Each` is whole), else 0.000001,
 * the 6 decimals conversions round to. A quantity below it cannot be recorded.
 *
 * @since 0.1.0
 * @category parsing
 */
export const precision = (unit: string): number => byAlias.get(unit.trim().toLowerCase())?.kind === "count" ? 1 : 1e-6

/**
 * Why `quantity` cannot be recorded in `unit` (below its precision, or not a whole count), or
 * undefined when it can. Range (positive, finite, at most {@link MAX_QUANTITY}) is the schema's.
 *
 * @since 0.1.0
 * @category parsing
 */
export const quantityProblem = (quantity: number, unit: string): string | undefined => {
  const step = precision(unit)
  if (step === 1 && (!Number.isInteger(quantity) || quantity < 1)) {
    return `must be a whole number of ${unit.trim()}, at least 1`
  }
  if (quantity < step) return `must be at least ${step} ${unit.trim()}`.trim()
  return undefined
}
