/**
 * The sandbox's simulate endpoint (DECISIONS "Simulate"): runs a scenario on a sandbox
 * connection's world and queues the event it fires, as production would. And its upstream faults:
 * a sandbox connection's emulated state system can be made to fail as a real one does (down, slow,
 * throttling, answering garbage, refusing an expired login), so that integrators can test how they
 * handle each documented error.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Envelope, Fault, ScenarioName, WebhookEvent } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"
import { strict } from "./Schemas.js"

/**
 * A scenario's name. The document enumerates them; the server takes any string so that an unknown
 * one is a 400 `unknown_scenario` naming the scenarios, not a generic schema failure.
 */
const scenarioName = (description: string) =>
  Schema.String.annotations({ jsonSchema: { type: "string", enum: ScenarioName.names, description } })

/** @since 0.1.0 @category schemas */
export const Simulate = Schema.Struct({
  scenario: scenarioName(
    `One of ${ScenarioName.names.join(", ")}. upstream_timeout (params delay_ms?) stops the ` +
      "connection's state system answering until its fault is cleared: every call on it answers 504 " +
      "provider_timeout with Retry-After within the upstream deadline (30 s, retries included)."
  ),
  params: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
}).annotations({ identifier: "Simulate", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const Simulated = Schema.Struct({
  scenario: scenarioName("The scenario that ran"),
  event: Schema.NullOr(WebhookEvent.WebhookEvent).annotations({
    description: "The delivery body, or null for scenarios that fire no event"
  }),
  deliveries: Schema.Int.annotations({ description: "How many subscriptions it was queued for" })
}).annotations({ identifier: "Simulated" })

/** @since 0.1.0 @category schemas */
export const SandboxFault = Schema.Struct({
  connection_id: Schema.String,
  fault: Schema.NullOr(Fault.Fault).annotations({ description: "The fault in force, or null" })
}).annotations({ identifier: "SandboxFault" })

/** @since 0.1.0 @category schemas */
export const SandboxReset = Schema.Struct({
  connection_id: Schema.String,
  reset_at: Schema.String.annotations({ description: "ISO 8601: when the connection was reset" })
}).annotations({ identifier: "SandboxReset" })

const ConnectionPath = Schema.Struct({ connection_id: Schema.String })

/**
 * @since 0.1.0
 * @category groups
 */
export class SandboxApi extends HttpApiGroup.make("sandbox")
  .annotate(OpenApi.Title, "Sandbox")
  .annotate(
    OpenApi.Description,
    "Scenarios, upstream faults and reset for sandbox connections: make things happen to test against."
  )
  .add(
    HttpApiEndpoint.post("simulate", "/v1/sandbox/:connection_id/simulate")
      .annotate(OpenApi.Transform, errors("body", "idempotent", "owned", "write"))
      .annotate(OpenApi.Summary, "Run a sandbox scenario")
      .annotate(
        OpenApi.Description,
        "Makes something happen in the connection's sandbox world (a transfer arrives, a lab result comes in, a login expires …) and fires its webhook event."
      )
      .setPath(ConnectionPath)
      .setPayload(Simulate)
      .addSuccess(Envelope.Envelope(Simulated))
  )
  .add(
    HttpApiEndpoint.post("reset", "/v1/sandbox/:connection_id/reset")
      .annotate(OpenApi.Transform, errors("idempotent", "owned"))
      .annotate(OpenApi.Summary, "Reset a sandbox connection")
      .setPath(ConnectionPath)
      .addSuccess(Envelope.Envelope(SandboxReset))
      .annotate(
        OpenApi.Description,
        "Clears the sandbox connection's writes, scenarios and fault: its next read sees the seeded world again. Idempotent; production connections get 403 sandbox_only."
      )
  )
  .add(
    HttpApiEndpoint.put("setFault", "/v1/sandbox/:connection_id/faults")
      .annotate(OpenApi.Transform, errors("body", "owned"))
      .annotate(OpenApi.Summary, "Switch on an upstream fault")
      .annotate(
        OpenApi.Description,
        "Makes the connection's sandbox state system answer as a real one does when it is down, slow, throttling, broken or refusing an expired login, until cleared or reset; an expired login also ends when the connection is relinked (the login entered again replaces it)."
      )
      .setPath(ConnectionPath)
      .setPayload(Fault.Fault.annotations({
        identifier: "Fault",
        parseOptions: strict,
        description:
          "outage (503 provider_unavailable), slow with delay_ms (504 provider_timeout with Retry-After past the 30 s upstream deadline), rate_limited with retry_after (503 provider_rate_limited), malformed (502 provider_invalid_response), expired_login (409 connection_login_required)"
      }))
      .addSuccess(Envelope.Envelope(SandboxFault))
  )
  .add(
    HttpApiEndpoint.get("getFault", "/v1/sandbox/:connection_id/faults")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Get the upstream fault in force")
      .annotate(OpenApi.Description, "The connection's sandbox fault, or null.")
      .setPath(ConnectionPath)
      .addSuccess(Envelope.Envelope(SandboxFault))
  )
  .add(
    HttpApiEndpoint.del("clearFault", "/v1/sandbox/:connection_id/faults")
      .annotate(OpenApi.Transform, errors("owned"))
      .annotate(OpenApi.Summary, "Clear the upstream fault")
      .annotate(OpenApi.Description, "The connection's sandbox state system answers normally again.")
      .setPath(ConnectionPath)
      .addSuccess(Envelope.Envelope(SandboxFault))
  )
  .middleware(Authentication)
{}
