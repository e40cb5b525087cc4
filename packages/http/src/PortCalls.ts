/**
 * Wrapping every call of a provider port that runs for a session: the one mechanism under the
 * metrics' counting (`Metrics.port`) and the request log's upstream context
 * (`RequestLogCapture.port`). A port method takes its session first or second (`list(resource,
 * session, …)`); the wrapper sees the method's name, the session's provider and state, and the
 * call's effect. One wrapper is made per method, at its first call.
 *
 * The call running is one fiber-local value, {@link current}, set once per call by {@link track}
 * (the outermost wrapper), which the governor's 429 count and the request log's upstream calls read:
 * each observer does not set a copy of its own (a `locally` copies the fiber's locals twice).
 *
 * @since 0.1.0
 */
import type { ProviderPort } from "@tracebridge/core"
import { Effect, FiberRef } from "effect"

/**
 * What a wrapper knows of one port call.
 *
 * @since 0.1.0
 * @category models
 */
export interface Call {
  readonly operation: string
  readonly provider: string
  readonly state: string
  readonly args: ReadonlyArray<unknown>
}

const isSession = (u: unknown): u is { readonly provider: string; readonly state: string } =>
  typeof u === "object" && u !== null && typeof (u as { provider?: unknown }).provider === "string" &&
  typeof (u as { state?: unknown }).state === "string" && "environment" in u

/**
 * A port whose effectful calls for a session go through `around` (others, and `descriptor`, as
 * they are).
 *
 * @since 0.1.0
 * @category wrappers
 */
export const wrap = (
  self: ProviderPort.Service,
  around: (call: Call, effect: Effect.Effect<unknown, unknown>) => Effect.Effect<unknown, unknown>
): ProviderPort.Service => {
  const wrappers = new Map<PropertyKey, (...args: Array<unknown>) => unknown>()
  return new Proxy(self, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver)
      if (typeof value !== "function" || property === "descriptor") return value
      const known = wrappers.get(property)
      if (known !== undefined) return known
      const operation = String(property)
      const wrapper = (...args: Array<unknown>) => {
        const result = value.apply(target, args)
        const session = isSession(args[0]) ? args[0] : isSession(args[1]) ? args[1] : undefined
        if (session === undefined || !Effect.isEffect(result)) return result
        // a port method's effect needs nothing from its context (`ProviderPort.Service`)
        const effect = result as Effect.Effect<unknown, unknown>
        return around({ operation, provider: session.provider, state: session.state, args }, effect)
      }
      wrappers.set(property, wrapper)
      return wrapper
    }
  })
}

/**
 * The port call running on this fiber (set by {@link track}), or `undefined` outside one.
 *
 * @since 0.1.0
 * @category context
 */
export const current: FiberRef.FiberRef<Call | undefined> = FiberRef.unsafeMake<Call | undefined>(undefined)

/**
 * A port whose calls set {@link current} while they run. Put it outside the observers that read it.
 *
 * @since 0.1.0
 * @category wrappers
 */
export const track = (self: ProviderPort.Service): ProviderPort.Service =>
  wrap(self, (call, effect) => Effect.locally(effect, current, call))
