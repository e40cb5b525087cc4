/**
 * The overall deadline of a provider call: one instant on Effect's `Clock` by which the caller
 * needs an answer, every try and every wait between tries included.
 *
 * The caller sets it once (the HTTP service, once per `/v1` request, with `enforce`, and `cut`
 * around each port call that reaches the state system; `within` is both for one effect); adapters
 * read it, so that no try's timeout and no retry's wait runs past it (`clamp`, `remaining`): a
 * client that could not get an answer in the budget left reports its last failure at once instead
 * of waiting. It travels with the fiber (a `FiberRef`), so a port's signature does not change; a
 * nested budget never extends the deadline already in force. Without one, adapters keep their own
 * per-try timeouts and retries.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, FiberRef, Function, GlobalValue, Option } from "effect"

/**
 * The deadline in force, as `Clock` milliseconds; none outside a call with a deadline.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const current: FiberRef.FiberRef<Option.Option<number>> = GlobalValue.globalValue(
  Symbol.for("@tracebridge/core/Deadline/current"),
  () => FiberRef.unsafeMake<Option.Option<number>>(Option.none())
)

/**
 * Runs `self` with a deadline `budget` from now, or the one already in force when that is
 * earlier. Nothing is cut here: adapters read the deadline (see `within` for the hard stop).
 *
 * @since 0.1.0
 * @category combinators
 */
export const withBudget = (budget: Duration.DurationInput) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Clock.currentTimeMillis, (now) =>
    Effect.flatMap(FiberRef.get(current), (inForce) => {
      const at = now + Duration.toMillis(budget)
      return Effect.locally(self, current, Option.some(Option.isSome(inForce) ? Math.min(inForce.value, at) : at))
    }))

/**
 * The time left before the deadline (zero once it has passed); none without a deadline.
 *
 * @since 0.1.0
 * @category getters
 */
export const remaining: Effect.Effect<Option.Option<Duration.Duration>> = Effect.flatMap(
  FiberRef.get(current),
  (deadline) =>
    Option.isNone(deadline)
      ? Effect.succeed(Option.none())
      : Effect.map(Clock.currentTimeMillis, (now) => Option.some(Duration.millis(Math.max(0, deadline.value - now))))
)

/**
 * `duration`, cut to the time left before the deadline: the timeout of one try.
 *
 * @since 0.1.0
 * @category getters
 */
export const clamp = (duration: Duration.DurationInput): Effect.Effect<Duration.Duration> =>
  Effect.map(
    remaining,
    Option.match({
      onNone: () => Duration.decode(duration),
      onSome: (left) => Duration.min(Duration.decode(duration), left)
    })
  )

/**
 * Whether waiting `wait` and then trying again still ends before the deadline (always, without
 * one): a retry that would start at or past the deadline is not worth making.
 *
 * @since 0.1.0
 * @category getters
 */
export const allows = (wait: Duration.DurationInput): Effect.Effect<boolean> =>
  Effect.map(
    remaining,
    Option.match({ onNone: () => true, onSome: (left) => Duration.lessThan(Duration.decode(wait), left) })
  )

/**
 * Whether the deadline in force is a hard stop ({@link enforce}): a call run with {@link cut} under
 * it is interrupted at the deadline. Without one, a deadline only informs the adapters.
 *
 * @since 0.1.0
 * @category fiber refs
 */
export const enforced: FiberRef.FiberRef<boolean> = GlobalValue.globalValue(
  Symbol.for("@tracebridge/core/Deadline/enforced"),
  () => FiberRef.unsafeMake(false)
)

/**
 * {@link withBudget}, as a hard stop: each call run with {@link cut} under it is interrupted at the
 * deadline and fails with its own `onTimeout`. Nothing else is raced, so what needs no upstream
 * (an answer kept in a cache, the work between calls) pays for no timer and no fiber: put `cut`
 * around the calls that reach the state system, under any cache.
 *
 * @since 0.1.0
 * @category combinators
 */
export const enforce = (budget: Duration.DurationInput) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  withBudget(budget)(Effect.locally(self, enforced, true))

/**
 * Runs `self` and, under a hard stop ({@link enforce}), interrupts it at the deadline and fails
 * with `onTimeout()`. Outside one, `self` runs as it is.
 *
 * @since 0.1.0
 * @category combinators
 */
export const cut: {
  <E2>(onTimeout: () => E2): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | E2, R>
  <A, E, R, E2>(self: Effect.Effect<A, E, R>, onTimeout: () => E2): Effect.Effect<A, E | E2, R>
} = Function.dual(
  2,
  <A, E, R, E2>(self: Effect.Effect<A, E, R>, onTimeout: () => E2): Effect.Effect<A, E | E2, R> =>
    Effect.flatMap(FiberRef.get(enforced), (hard) =>
      hard
        ? Effect.flatMap(
          remaining,
          (left) => Option.isNone(left) ? self : Effect.timeoutFail(self, { duration: left.value, onTimeout })
        )
        : self)
)

/**
 * Runs `self` within a deadline `budget` from now (or the earlier one in force), which the
 * adapters see, and fails with `onTimeout()` if it is still running then (it is interrupted): a
 * hard stop ({@link enforce}) with `self` {@link cut} at it.
 *
 * @since 0.1.0
 * @category combinators
 */
export const within: {
  <E2>(
    options: { readonly budget: Duration.DurationInput; readonly onTimeout: () => E2 }
  ): <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A, E | E2, R>
  <A, E, R, E2>(
    self: Effect.Effect<A, E, R>,
    options: { readonly budget: Duration.DurationInput; readonly onTimeout: () => E2 }
  ): Effect.Effect<A, E | E2, R>
} = Function.dual(2, <A, E, R, E2>(
  self: Effect.Effect<A, E, R>,
  options: { readonly budget: Duration.DurationInput; readonly onTimeout: () => E2 }
): Effect.Effect<A, E | E2, R> => enforce(options.budget)(cut(self, options.onTimeout)))
