/**
 * The sandbox's simulate endpoint (DECISIONS "Simulate"): runs a scenario on a sandbox
 * connection's world and queues the event it fires, as production would.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Envelope, WebhookEvent } from "@tracebridge/core"
import { Schema } from "effect"
import { Authentication } from "../Security.js"
import { strict } from "./Schemas.js"

/** @since 0.1.0 @category schemas */
export const Simulate = Schema.Struct({
  scenario: Schema.String.annotations({
    description:
      "transfer_arrived, transfer_completed, lab_result_received, connection_login_required, plant_phase_advanced or package_hold"
  }),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "Simulate", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const Simulated = Schema.Struct({
  scenario: Schema.String,
  event: Schema.NullOr(WebhookEvent.WebhookEvent).annotations({
    description: "The delivery body, or null for scenarios that fire no event"
  }),
  deliveries: Schema.Int.annotations({ description: "How many subscriptions it was queued for" })
}).annotations({ identifier: "Simulated" })

/**
 * @since 0.1.0
 * @category groups
 */
export class SandboxApi extends HttpApiGroup.make("sandbox")
  .add(
    HttpApiEndpoint.post("simulate", "/v1/sandbox/:connection_id/simulate")
      .setPath(Schema.Struct({ connection_id: Schema.String }))
      .setPayload(Simulate)
      .addSuccess(Envelope.Envelope(Simulated))
  )
  .middleware(Authentication)
{}
