/**
 * What every scenario family shares: how a scenario is defined (its params and what it does to a
 * world), the answers for a refused or exhausted run, the move through a core transition table,
 * and the change a scenario fires.
 *
 * @since 0.1.0
 */
import type { Package, WebhookEvent } from "@tracebridge/core"
import { ProviderError, Transitions } from "@tracebridge/core"
import type { Schema } from "effect"
import { Either } from "effect"
import type { Exhausted, Failure, Outcome } from "../Scenario.js"
import type { FacilityData, World } from "../World.js"

/**
 * What a scenario did, apart from its name (which the face adds).
 *
 * @since 0.1.0
 * @category models
 */
export type Done = Omit<Outcome, "scenario">

/**
 * One scenario: the schema its `params` must match (excess properties refused) and what it does
 * to a world with the decoded params.
 *
 * @since 0.1.0
 * @category models
 */
export interface Definition<P> {
  readonly params: Schema.Schema<P, any>
  /** `at`: the instant the scenario runs at (epoch ms). */
  readonly run: (world: World, params: P, at: number) => Either.Either<Done, Failure>
}

/**
 * A scenario's definition, with its params' type inferred from the schema.
 *
 * @since 0.1.0
 * @category constructors
 */
export const define = <P, I>(definition: {
  readonly params: Schema.Schema<P, I>
  readonly run: (world: World, params: P, at: number) => Either.Either<Done, Failure>
}): Definition<P> => definition

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
