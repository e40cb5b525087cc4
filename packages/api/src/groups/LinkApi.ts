/**
 * Link tokens and their exchange, and the sandbox shortcut that links without the widget.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Envelope } from "@tracebridge/core"
import { errors } from "../OpenApiErrors.js"
import { Authentication } from "../Security.js"
import { Exchange, Exchanged, LinkToken, LinkTokenCreate, PublicToken, SandboxPublicTokenCreate } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category groups
 */
export class LinkApi extends HttpApiGroup.make("link")
  .annotate(OpenApi.Title, "Link")
  .annotate(
    OpenApi.Description,
    "Link tokens for the Connect widget, the public-token exchange that creates a connection, and the sandbox shortcut that links without the widget."
  )
  .add(
    HttpApiEndpoint.post("createLinkToken", "/v1/link/token/create")
      .annotate(OpenApi.Transform, errors("body", "idempotent", "organisation", "owned"))
      .annotate(OpenApi.Summary, "Create a link token")
      .annotate(
        OpenApi.Description,
        "A short-lived (4 h), single-use token that opens the Connect widget for one end user. The widget shows `client_name` (default: your organisation's name) and `logo_url` on every step. Update mode (`connection_id`) re-enters the login of an existing connection."
      ).setPayload(LinkTokenCreate).addSuccess(
        Envelope.Envelope(LinkToken)
      )
  )
  .add(
    HttpApiEndpoint.post("exchangePublicToken", "/v1/link/token/exchange")
      .annotate(OpenApi.Transform, errors("body", "idempotent", "organisation"))
      .annotate(OpenApi.Summary, "Exchange a public token for a connection")
      .annotate(
        OpenApi.Description,
        "Trades the single-use public token the Connect widget returned (30 min) for the connection id; the first exchange also returns the connection token, once."
      ).setPayload(Exchange).addSuccess(
        Envelope.Envelope(Exchanged)
      )
  )
  .add(
    HttpApiEndpoint.post("createSandboxPublicToken", "/v1/sandbox/public_token/create")
      .annotate(OpenApi.Transform, errors("body", "idempotent", "organisation", "owned", "upstream"))
      .annotate(OpenApi.Summary, "Create a sandbox public token without the widget")
      .annotate(
        OpenApi.Description,
        "Links a sandbox login server-side and returns a public token to exchange, for tests and CI. With `connection_id`, it is update mode without the widget (as Plaid's `reset_login`): the login of that sandbox connection is entered again (the sandbox's good login unless `credentials` says otherwise), the connection leaves `error`, and the public token exchanges for the same connection."
      )
      .setPayload(SandboxPublicTokenCreate)
      .addSuccess(Envelope.Envelope(PublicToken))
  )
  .middleware(Authentication)
{}
