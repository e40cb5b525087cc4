/**
 * The names of the sandbox's scenarios (DECISIONS "Simulate"): what `POST
 * /v1/sandbox/connections/{id}/simulate` takes and the document enumerates. The sandbox runs them
 * (its `Scenario` module); the contract only needs their names.
 *
 * @since 0.1.0
 */

/**
 * Every scenario name.
 *
 * @since 0.1.0
 * @category constants
 */
export const names = [
  "transfer_arrived",
  "transfer_completed",
  "lab_result_received",
  "connection_login_required",
  "plant_phase_advanced",
  "package_hold",
  "upstream_timeout"
] as const

/**
 * @since 0.1.0
 * @category models
 */
export type ScenarioName = (typeof names)[number]
