/**
 * The upper bound of a read by modification time. A list with `updated_since` reads every change
 * from then up to now; the managed sync reads the provider's history one bounded window at a time
 * (`ProviderPort.Service.changes`), so it sets `Until` for the length of the read. A driver that
 * reads by modification time (Metrc's `lastModifiedStart`/`lastModifiedEnd`) must stop at `Until`
 * when it is set; a driver that reads whole tables ignores it.
 *
 * @since 0.1.0
 */
import { Context, Effect, Option } from "effect"

/**
 * The end of the window (epoch milliseconds, inclusive), or none for "now".
 *
 * @since 0.1.0
 * @category references
 */
export class Until extends Context.Reference<Until>()("@tracebridge/core/ReadWindow/Until", {
  defaultValue: (): Option.Option<number> => Option.none()
}) {}

/**
 * Runs a read bounded at `untilMs`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const bounded = (untilMs: number) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(self, Until, Option.some(untilMs))
