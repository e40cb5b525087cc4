/**
 * The API's types, generated from its OpenAPI document (`src/generated/openapi.ts`, written by
 * `npm run sdk:generate`), and short names for the resources.
 *
 * @since 0.1.0
 */
import type { components } from "./generated/openapi.js"

export type {
  /**
   * @since 0.1.0
   */
  components,
  /**
   * @since 0.1.0
   */
  operations,
  /**
   * @since 0.1.0
   */
  paths
} from "./generated/openapi.js"

/**
 * Every schema of the document: `Schemas["Package"]`, `Schemas["WebhookEvent"]`, …
 *
 * @since 0.1.0
 * @category models
 */
export type Schemas = components["schemas"]

/** @since 0.1.0 */
export type Connection = Schemas["Connection"]
/** @since 0.1.0 */
export type Facility = Schemas["Facility"]
/** @since 0.1.0 */
export type Package = Schemas["Package"]
/** @since 0.1.0 */
export type LabResult = Schemas["LabResult"]
/** @since 0.1.0 */
export type Transfer = Schemas["Transfer"]
/** @since 0.1.0 */
export type Pagination = Schemas["Pagination"]
/** @since 0.1.0 */
export type TokenResponse = Schemas["TokenResponse"]
