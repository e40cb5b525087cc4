/**
 * What every scenario family shares: how a scenario is defined (its params and what it does to a
 * world), the answers for a refused or exhausted run, the move through a core transition table,
 * and the change a scenario fires.
 *
 * @since 0.1.0
 */
import type { Fault, Package, ScenarioName, WebhookEvent } from "@tracebridge/core"
import { ProviderError, Transitions } from "@tracebridge/core"
import { Either, Schema } from "effect"
import type { FacilityData, World } from "../World.js"

/**
 * What a scenario did: the change a production connection would hear of (none for state-only
 * scenarios) with the world's serial number for it, whether the login now needs re-entering, and
 * the upstream fault to switch on, if any (`upstream_timeout`).
 */
export interface Outcome {
  readonly scenario: ScenarioName.ScenarioName
  /** The event's type and data, with no envelope: no id, creation time or connection. */
  readonly change: WebhookEvent.Change | null
  /**
   * With a change, the world's number for it (its event counter, which every change fired raises):
   * what a caller with no number of its own (the control API) makes the event's id from.
   */
  readonly serial?: number
  readonly loginRequired: boolean
  readonly fault?: Fault.Fault
}

/**
 * Why a scenario did not run.
 */
export type Failure =
  | ProviderError.InvalidInput
  | ProviderError.ResourceNotFound
  | ProviderError.InvalidStateTransition
  | { readonly _tag: "UnknownScenario"; readonly message: string }
  | Exhausted

/**
 * A scenario asked to pick its own object found none left in the world (every package tested, every
 * plant flowering, …): what ran out and what to do about it are in the message.
 */
export interface Exhausted {
  readonly _tag: "Exhausted"
  readonly scenario: string
  readonly message: string
}

/**
 * What a scenario did, apart from its name (which the face adds).
 *
 * @since 0.1.0
 * @category models
 */
export type Done = Omit<Outcome, "scenario">

/**
 * One scenario: what it does to a world with the params it was given, decoded by its own schema
 * (excess properties refused: an unknown param is `InvalidInput` at `simulate.<name>`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition {
  /** `at`: the instant the scenario runs at (epoch ms); `name`: the scenario's, for the error path. */
  readonly run: (world: World, params: unknown, at: number, name: string) => Either.Either<Done, Failure>
}

/**
 * A scenario's definition from the schema of its params and what it does with them decoded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const define = <P, I>(definition: {
  readonly params: Schema.Schema<P, I>
  readonly run: (world: World, params: P, at: number) => Either.Either<Done, Failure>
}): Definition => {
  const decode = Schema.decodeUnknownEither(definition.params, { onExcessProperty: "error" })
  return {
    run: (world, params, at, name) =>
      Either.flatMap(
        Either.mapLeft(decode(params), (e) => ProviderError.InvalidInput.fromParseError(`simulate.${name}`, e)),
        (decoded) => definition.run(world, decoded, at)
      )
  }
}

/**
 * A refusal, as the left of a run.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fail = <E>(e: E): Either.Either<never, E> => Either.left(e)

/**
 * The scenario found nothing of `what` left to pick; `param` names the parameter that picks one
 * instead, and `remedy` any other way out.
 *
 * @since 0.1.0
 * @category constructors
 */
export const exhausted = (
  scenario: string,
  what: string,
  param: string,
  remedy?: string
): Either.Either<never, Exhausted> =>
  Either.left({
    _tag: "Exhausted",
    scenario,
    message: `${scenario}: no ${what} is left in this sandbox connection's world. Pass params.${param} to pick ` +
      `one yourself${remedy === undefined ? "" : `, ${remedy}`}, or link a new sandbox connection to start again ` +
      "from the seeded world."
  })

/**
 * An instant to the second, as ISO 8601.
 *
 * @since 0.1.0
 * @category constructors
 */
export const iso = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString()

/**
 * What a scenario that fires a change did: the change, with the world's serial number for it. Each
 * change fired takes the next number of the world's counter (which the transfers and lab results
 * a world creates are numbered from too), so that a replayed world counts the same.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fire = (world: World, change: WebhookEvent.Change): Done => ({
  change,
  serial: world.counters.next++,
  loginRequired: false
})

/**
 * `to`, if the machine allows the move from `from`; otherwise `InvalidStateTransition`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const transition = <S extends string | boolean>(m: Transitions.Machine<S>, from: S, to: S) =>
  Transitions.canTransition(m, from, to)
    ? Either.right(to)
    : Either.left(
      new ProviderError.InvalidStateTransition({
        machine: m.name,
        from: String(from),
        to: String(to),
        message: `${m.name} cannot move from ${String(from)} to ${String(to)}`
      })
    )

/**
 * The package `id`, or, without one, the first that `pick` accepts, with its facility.
 *
 * @since 0.1.0
 * @category getters
 */
export const findPackage = (
  world: World,
  id: string | undefined,
  pick: (p: Package.Package, d: FacilityData) => boolean
) => {
  for (const data of world.facilities) {
    const pkg = data.packages.find((p) => (id === undefined ? pick(p, data) : p.id === id))
    if (pkg !== undefined) return { data, pkg }
  }
  return undefined
}
