/**
 * The Connect page's own API: the hosted page (`/connect?link_token=…`) reads the session its link
 * token opens and submits the login the end user typed. Authenticated by the link token, not a
 * bearer token: the end user's browser holds no Tracebridge credential.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Envelope } from "@tracebridge/core"
import { Schema } from "effect"
import { strict } from "./Schemas.js"

const Field = Schema.Struct({
  name: Schema.String,
  label: Schema.String,
  secret: Schema.Boolean,
  description: Schema.optional(Schema.String)
})

/** @since 0.1.0 @category schemas */
export const ConnectSession = Schema.Struct({
  link_session_id: Schema.String,
  environment: Schema.Literal("sandbox", "production"),
  redirect: Schema.Boolean,
  /** Redirect mode: where the page returns to when the user leaves (the link token's `state` added). */
  exit_uri: Schema.NullOr(Schema.String),
  /** The branding the page shows on every step (DECISIONS "Connect widget branding"). */
  client_name: Schema.String,
  logo_url: Schema.NullOr(Schema.String),
  /**
   * Who may frame the page (its CSP `frame-ancestors` sources, issue #28): the page posts to the
   * SDK's origin only when it is one of these.
   */
  frame_ancestors: Schema.Array(Schema.String),
  update: Schema.NullOr(Schema.Struct({ provider: Schema.String, state: Schema.String })),
  providers: Schema.Array(Schema.Struct({
    name: Schema.String,
    display_name: Schema.String,
    states: Schema.Array(Schema.String),
    credential_fields: Schema.Array(Field),
    test_login: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
  }))
}).annotations({ identifier: "ConnectSession" })

/** @since 0.1.0 @category schemas */
export const ConnectSubmit = Schema.Struct({
  link_token: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(500)),
  link_session_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  provider: Schema.String.pipe(Schema.maxLength(50)),
  state: Schema.String.pipe(Schema.maxLength(2)),
  credentials: Schema.Record({
    key: Schema.String.pipe(Schema.maxLength(100)),
    value: Schema.String.pipe(Schema.maxLength(500))
  })
}).annotations({ identifier: "ConnectSubmit", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const ConnectResult = Schema.Struct({
  public_token: Schema.String,
  redirect_uri: Schema.NullOr(Schema.String).annotations({ description: "Redirect mode: where the page returns to" })
}).annotations({ identifier: "ConnectResult" })

/**
 * @since 0.1.0
 * @category groups
 */
export class ConnectApi extends HttpApiGroup.make("connect")
  .add(
    HttpApiEndpoint.get("connectSession", "/connect/session")
      .setUrlParams(Schema.Struct({ link_token: Schema.String }))
      .addSuccess(Envelope.Envelope(ConnectSession))
  )
  .add(
    HttpApiEndpoint.post("connectSubmit", "/connect/submit").setPayload(ConnectSubmit).addSuccess(
      Envelope.Envelope(ConnectResult)
    )
  )
  // the widget's own routes: not public API, so not in the document
  .annotate(OpenApi.Exclude, true)
{}
