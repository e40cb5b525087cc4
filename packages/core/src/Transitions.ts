/**
 * The transition tables of DECISIONS "States and transitions", and the one `canTransition`
 * that everything which moves a state (writes, sandbox scenarios, the connection lifecycle)
 * goes through.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { ConnectionStatus } from "./Connection.js"
import type { FacilityStatus } from "./Facility.js"
import type { GrowthPhase } from "./Plant.js"
import { InvalidStateTransition } from "./ProviderError.js"
import type { TransferStatus } from "./Transfer.js"

/**
 * A state machine: its states and the allowed moves. No state moves to itself.
 *
 * @since 0.1.0
 * @category models
 */
export interface Machine<S extends string | boolean> {
  readonly name: string
  readonly states: ReadonlyArray<S>
  readonly edges: ReadonlyArray<readonly [from: S, to: S]>
}

const machine = <S extends string | boolean>(
  name: string,
  states: ReadonlyArray<S>,
  edges: ReadonlyArray<readonly [S, S]>
): Machine<S> => ({ name, states, edges })

/**
 * `pending` → `active` (first sync succeeds) · `pending` → `error` (the first sync finds the
 * login rejected) · `active` → `error` (provider rejects the login) · `error` → `active` (the user
 * re-enters the login in update mode) · any other state → `inactive` (disconnect; final).
 *
 * @since 0.1.0
 * @category machines
 */
export const connectionStatus: Machine<ConnectionStatus> = machine(
  "Connection.status",
  ["pending", "active", "error", "inactive"],
  [
    ["pending", "active"],
    ["pending", "error"],
    ["active", "error"],
    ["error", "active"],
    ["pending", "inactive"],
    ["active", "inactive"],
    ["error", "inactive"]
  ]
)

/**
 * `pending` → `in_transit` (departure) → `received` | `rejected`; `pending` → `rejected`.
 *
 * @since 0.1.0
 * @category machines
 */
export const transferStatus: Machine<TransferStatus> = machine(
  "Transfer.status",
  ["pending", "in_transit", "received", "rejected"],
  [
    ["pending", "in_transit"],
    ["in_transit", "received"],
    ["in_transit", "rejected"],
    ["pending", "rejected"]
  ]
)

/**
 * `clone` → `vegetative` → `flowering`.
 *
 * @since 0.1.0
 * @category machines
 */
export const growthPhase: Machine<GrowthPhase> = machine(
  "Plant.growth_phase",
  ["clone", "vegetative", "flowering"],
  [
    ["clone", "vegetative"],
    ["vegetative", "flowering"]
  ]
)

/**
 * `active` ↔ `inactive` (provider data only).
 *
 * @since 0.1.0
 * @category machines
 */
export const facilityStatus: Machine<FacilityStatus> = machine(
  "Facility.status",
  ["active", "inactive"],
  [
    ["active", "inactive"],
    ["inactive", "active"]
  ]
)

/**
 * `false` ↔ `true` (sandbox scenario only; never written in production).
 *
 * @since 0.1.0
 * @category machines
 */
export const packageHold: Machine<boolean> = machine("Package.is_on_hold", [false, true], [
  [false, true],
  [true, false]
])

/**
 * Every machine, for documentation and exhaustive tests.
 *
 * @since 0.1.0
 * @category machines
 */
export const machines = [connectionStatus, transferStatus, growthPhase, facilityStatus, packageHold] as const

/**
 * Whether `from` may move to `to`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const canTransition = <S extends string | boolean>(m: Machine<S>, from: S, to: S): boolean =>
  m.edges.some(([a, b]) => a === from && b === to)

/**
 * The states `from` may move to.
 *
 * @since 0.1.0
 * @category utils
 */
export const next = <S extends string | boolean>(m: Machine<S>, from: S): ReadonlyArray<S> =>
  m.edges.filter(([a]) => a === from).map(([, b]) => b)

/**
 * Moves `from` to `to`, or fails with `InvalidStateTransition`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const transition = <S extends string | boolean>(
  m: Machine<S>,
  from: S,
  to: S
): Effect.Effect<S, InvalidStateTransition> =>
  canTransition(m, from, to)
    ? Effect.succeed(to)
    : Effect.fail(
      new InvalidStateTransition({
        machine: m.name,
        from: String(from),
        to: String(to),
        message: `${m.name} cannot move from ${String(from)} to ${String(to)}` +
          (next(m, from).length > 0 ? ` (allowed: ${next(m, from).map(String).join(", ")})` : " (it is final)")
      })
    )
