/**
 * Shared field schemas: ISO dates and date-times, bounded strings and quantities.
 *
 * Dates on the wire are ISO 8601 strings and stay strings in the type (the spec's
 * resources are JSON objects); the schemas only check that they name a real day or instant.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { isIsoDate, isIsoDateTime } from "./internal/calendar.js"
import * as Units from "./Units.js"

/**
 * An ISO 8601 calendar date, `YYYY-MM-DD`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IsoDate = Schema.String.pipe(
  Schema.filter((s) => isIsoDate(s) || `expected an ISO 8601 date (YYYY-MM-DD), got ${JSON.stringify(s)}`),
  Schema.annotations({
    identifier: "IsoDate",
    description: "ISO 8601 calendar date (YYYY-MM-DD)",
    examples: ["2026-03-14"],
    jsonSchema: { type: "string", format: "date" }
  })
)

/**
 * An ISO 8601 date-time with a `Z` or `±HH:MM` offset, so that it names one instant.
 *
 * @since 0.1.0
 * @category schemas
 */
export const IsoDateTime = Schema.String.pipe(
  Schema.filter((s) =>
    isIsoDateTime(s) ||
    `expected an ISO 8601 date-time with an offset (e.g. 2026-03-14T09:30:00Z), got ${JSON.stringify(s)}`
  ),
  Schema.annotations({
    identifier: "IsoDateTime",
    description: "ISO 8601 date-time with a Z or ±HH:MM offset",
    examples: ["2026-03-14T09:30:00Z"],
    jsonSchema: { type: "string", format: "date-time" }
  })
)

/**
 * A string that is not blank and at most 500 characters long.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Text = Schema.String.pipe(
  Schema.filter((s) => s.trim().length > 0 || "must not be blank"),
  Schema.maxLength(500),
  Schema.annotations({ identifier: "Text" })
)

/**
 * A finite number greater than zero and at most `Units.MAX_QUANTITY`. Whether it is fine enough
 * for its unit is checked where the unit is known (`Commands`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const PositiveQuantity = Schema.Number.pipe(
  Schema.finite(),
  Schema.positive(),
  Schema.lessThanOrEqualTo(Units.MAX_QUANTITY),
  Schema.annotations({ identifier: "PositiveQuantity" })
)

/**
 * A finite number (no NaN or Infinity, which JSON cannot carry).
 *
 * @since 0.1.0
 * @category schemas
 */
export const FiniteNumber = Schema.Number.pipe(Schema.finite(), Schema.annotations({ identifier: "FiniteNumber" }))

/**
 * A percentage between 0 and 100 inclusive.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Percentage = Schema.Number.pipe(Schema.finite(), Schema.between(0, 100))

/**
 * Free-form provider data.
 *
 * @since 0.1.0
 * @category schemas
 */
export const FreeForm = Schema.Record({ key: Schema.String, value: Schema.Unknown })
