/**
 * Scenarios (DECISIONS "Simulate"): the state changes a production state system would make on its
 * own — a transfer arriving or completing, a lab result coming in, a login lapsing, a plant
 * advancing, a package put on hold. Each moves state only through the core transition tables (an
 * impossible move is `InvalidStateTransition`) and returns the change a production connection
 * would hear of as a webhook event, if any: the event's type and data, without the envelope (id,
 * creation time, connection) that the caller wraps it in (`WebhookEvent.wrap`, with an id from
 * `eventId`).
 *
 * One scenario changes no state: `upstream_timeout` (DECISIONS "Sandbox reset and faults") stops
 * the state system answering. It returns the upstream fault to switch on (a `slow` fault held for
 * `delay_ms`, by default `Faults.MAX_DELAY_MS`), which `Sandbox.apply` sets until it is cleared.
 *
 * This module is the face: the names, what a run takes and answers, and `run`, which looks the
 * scenario up in a table. Each family of scenarios is a module of `scenarios/`: `transfers`,
 * `labResults`, `plants`, `packages` and `connection` (the login and the upstream).
 *
 * @since 0.1.0
 */
import { ScenarioName, WebhookEvent } from "@tracebridge/core"
import { Either } from "effect"
import type * as Common from "./scenarios/common.js"
import * as Connection from "./scenarios/connection.js"
import * as LabResults from "./scenarios/labResults.js"
import * as Packages from "./scenarios/packages.js"
import * as Plants from "./scenarios/plants.js"
import * as Transfers from "./scenarios/transfers.js"
import * as Seed from "./Seed.js"
import type { World } from "./World.js"
import { packageView } from "./World.js"

/**
 * Every scenario name (core's `ScenarioName.names`, which the contract shares).
 *
 * @since 0.1.0
 * @category constants
 */
export const names = ScenarioName.names

/**
 * @since 0.1.0
 * @category models
 */
export type Name = ScenarioName.ScenarioName

/**
 * A scenario to run, as logged. Logs stored while the sandbox still built the event's envelope
 * also hold the connection's id and a `sequence`: a run ignores them, and replays to the same
 * world.
 *
 * @since 0.1.0
 * @category models
 */
export interface Input {
  readonly name: string
  readonly params: unknown
  /** The instant the scenario runs at (epoch ms). */
  readonly at: number
}

/**
 * What a scenario did: the change a production connection would hear of (none for state-only
 * scenarios) with the world's serial number for it, whether the login now needs re-entering, and
 * the upstream fault to switch on, if any (`upstream_timeout`). Defined beside the scenarios
 * (`scenarios/common.ts`), which make it.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome = Common.Outcome

/**
 * Why a scenario did not run.
 *
 * @since 0.1.0
 * @category models
 */
export type Failure = Common.Failure

/**
 * A scenario asked to pick its own object found none left in the world (every package tested, every
 * plant flowering, …): what ran out and what to do about it are in the message.
 *
 * @since 0.1.0
 * @category models
 */
export type Exhausted = Common.Exhausted

/** Each scenario, by name: its params and what it does (one module per family). */
const scenarios: { readonly [N in Name]: Common.Definition } = {
  transfer_arrived: Transfers.arrived,
  transfer_completed: Transfers.completed,
  lab_result_received: LabResults.received,
  connection_login_required: Connection.loginRequired,
  plant_phase_advanced: Plants.phaseAdvanced,
  package_hold: Packages.hold,
  upstream_timeout: Connection.upstreamTimeout
}

const isName = (name: string): name is Name => (names as ReadonlyArray<string>).includes(name)

/**
 * Runs a scenario on a world.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (world: World, input: Input): Either.Either<Outcome, Failure> => {
  if (!isName(input.name)) {
    return Either.left({
      _tag: "UnknownScenario" as const,
      message: `\`scenario\` must be one of: ${names.join(", ")}; got "${
        input.name.length > 100 ? `${input.name.slice(0, 100)}…` : input.name
      }"`
    })
  }
  const name = input.name
  return Either.map(
    scenarios[name].run(world, input.params ?? {}, input.at, name),
    (done) => ({ scenario: name, ...done })
  )
}

/**
 * The id of the event numbered `n` in a world: made from the world (its seed, provider, state and
 * login) and the number, the same every time. The API numbers a sandbox connection's events by
 * its sandbox version, which every change and reset raises, so that no id is delivered twice;
 * the control API by the world's own count (`Outcome.serial`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const eventId = (
  world: Pick<World, "seed" | "provider" | "state" | "login">,
  n: number
): WebhookEvent.EventId =>
  WebhookEvent.EventId.make(
    `evt_${Seed.integer(`${world.seed}|${world.provider}|${world.state}|${world.login}`, "event", n).toString(36)}${
      n.toString(36)
    }`
  )

/**
 * A package with its lab results, for scenario callers that report it.
 *
 * @since 0.1.0
 * @category getters
 */
export const packageWithResults = packageView
