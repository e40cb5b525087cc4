/**
 * The installed providers: what each state system can do per state, and the login fields the
 * Connect widget asks for. Built from the one registration list, so a new provider shows here
 * with no change to `http`.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Envelope, ProviderModule } from "@tracebridge/core"
import { Schema } from "effect"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"

/**
 * @since 0.1.0
 * @category groups
 */
export class ProvidersApi extends HttpApiGroup.make("providers")
  .annotate(OpenApi.Title, "Providers")
  .annotate(
    OpenApi.Description,
    "The installed state systems: their states, licence types, capabilities and the login fields the widget asks for."
  )
  .add(
    HttpApiEndpoint.get("listProviders", "/v1/providers")
      .annotate(OpenApi.Transform, errors())
      .addSuccess(Envelope.Envelope(Schema.Array(ProviderModule.Summary)))
      .annotate(OpenApi.Summary, "List the installed providers")
      .annotate(
        OpenApi.Description,
        "Every installed state system: its states, with the licence types, capabilities and environments " +
          "(sandbox, production) of each, and the login fields the Connect widget asks for. Any access token."
      )
  )
  .middleware(Authentication)
{}
