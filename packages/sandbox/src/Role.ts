/**
 * What a facility of a sandbox world is for. Its own module so that the world and the provider
 * profiles, which both need it, import it without importing each other.
 *
 * @since 0.1.0
 */

/**
 * What a facility is for.
 *
 * @since 0.1.0
 * @category models
 */
export type Role = "cultivation" | "manufacturing" | "testing" | "retail" | "medical"
