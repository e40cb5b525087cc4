/**
 * Link tokens and their exchange, and the sandbox shortcut that links without the widget.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Envelope } from "@tracebridge/core"
import { Authentication } from "../Security.js"
import { Exchange, Exchanged, LinkToken, LinkTokenCreate, PublicToken, SandboxPublicTokenCreate } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category groups
 */
export class LinkApi extends HttpApiGroup.make("link")
  .add(
    HttpApiEndpoint.post("createLinkToken", "/v1/link/token/create").setPayload(LinkTokenCreate).addSuccess(
      Envelope.Envelope(LinkToken)
    )
  )
  .add(
    HttpApiEndpoint.post("exchangePublicToken", "/v1/link/token/exchange").setPayload(Exchange).addSuccess(
      Envelope.Envelope(Exchanged)
    )
  )
  .add(
    HttpApiEndpoint.post("createSandboxPublicToken", "/v1/sandbox/public_token/create")
      .setPayload(SandboxPublicTokenCreate)
      .addSuccess(Envelope.Envelope(PublicToken))
  )
  .middleware(Authentication)
{}
