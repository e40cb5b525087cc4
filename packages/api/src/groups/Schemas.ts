/**
 * Request and response bodies of the `/v1` contract that are not core resources.
 *
 * @since 0.1.0
 */
import { Connection, Envelope, ProviderName } from "@tracebridge/core"
import { Either, Schema } from "effect"
import * as RedirectUri from "../RedirectUri.js"

const Text = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000))

/** Request bodies refuse properties they do not declare. */
export const strict = { onExcessProperty: "error" } as const

/** @since 0.1.0 @category schemas */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  refresh_token: Schema.optional(Schema.String),
  scope: Schema.optional(Schema.String)
}).annotations({ identifier: "TokenResponse" })

/** An absolute https URL with a host and nothing a browser would read differently. */
const isHttpsUrl = (s: string): boolean => {
  if (!/^https:\/\/[^\s"'<>\\`]+$/.test(s)) return false
  try {
    const url = new URL(s)
    return url.protocol === "https:" && url.hostname !== "" && url.username === "" && url.password === ""
  } catch {
    return false
  }
}

/**
 * The name the Connect widget shows (DECISIONS "Connect widget branding"): 1 to 64 characters, not
 * blank. A link token's `client_name`, and an organisation's Connect default (the dashboard).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ClientName = Schema.String.pipe(
  Schema.minLength(1, { message: () => "client_name must be 1 to 64 characters" }),
  Schema.maxLength(64, { message: () => "client_name must be 1 to 64 characters" }),
  Schema.pattern(/\S/, { message: () => "client_name must not be blank" })
)

/**
 * The logo the Connect widget shows: an absolute https URL, at most 2000 characters. A link
 * token's `logo_url`, and an organisation's Connect default (the dashboard).
 *
 * @since 0.1.0
 * @category schemas
 */
export const LogoUrl = Schema.String.pipe(
  Schema.maxLength(2000),
  Schema.filter((s) => isHttpsUrl(s), { message: () => "logo_url must be an https URL" })
).annotations({ jsonSchema: { type: "string", format: "uri", pattern: "^https://", maxLength: 2000 } })

/** @since 0.1.0 @category schemas */
export const LinkTokenCreate = Schema.Struct({
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  redirect_uri: Schema.optional(
    Text.pipe(
      Schema.filter((s) => {
        const parsed = RedirectUri.parse(s)
        return Either.isLeft(parsed) ? parsed.left : true
      }, {
        jsonSchema: { format: "uri", pattern: "^https?://", maxLength: 2000 }
      })
    )
  ).annotations({
    description:
      "Redirect mode: where the Connect page returns to. An absolute URL without user, password or fragment; https (http only to localhost, 127.0.0.0/8 or [::1] in the sandbox); when the organisation lists allowed redirect origins, its origin must be one of them",
    examples: ["https://acme.example/linked"]
  }),
  state: Schema.optional(Text),
  external_id: Schema.optional(Text),
  connection_id: Schema.optional(Text).annotations({
    description: "Update mode: re-enter the login of this connection"
  }),
  client_name: Schema.optional(ClientName).annotations({
    description:
      "The name the Connect widget shows on every step (1–64 characters); defaults to the organisation's name",
    examples: ["Acme Retail"]
  }),
  logo_url: Schema.optional(LogoUrl).annotations({
    description: "An https URL of a logo the Connect widget shows beside `client_name` on every step",
    examples: ["https://acme.example/logo.png"]
  })
}).annotations({ identifier: "LinkTokenCreate", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const LinkToken = Schema.Struct({ link_token: Schema.String, expires_at: Schema.String }).annotations({
  identifier: "LinkToken"
})

/** @since 0.1.0 @category schemas */
export const Exchange = Schema.Struct({ public_token: Text }).annotations({
  identifier: "PublicTokenExchange",
  parseOptions: strict
})

/** @since 0.1.0 @category schemas */
export const Exchanged = Schema.Struct({
  connection_id: Schema.String,
  connection_token: Schema.optional(Schema.String).annotations({
    description: "Only on the connection's first exchange; shown once"
  }),
  provider: ProviderName.ProviderName,
  state: ProviderName.UsState,
  status: Connection.ConnectionStatus,
  client_state: Schema.optional(Schema.String)
}).annotations({ identifier: "PublicTokenExchanged" })

/** @since 0.1.0 @category schemas */
export const SandboxPublicTokenCreate = Schema.Struct({
  provider: Schema.optional(ProviderName.ProviderName).annotations({
    description: "The state system to link; required unless `connection_id` is given"
  }),
  state: Schema.optional(ProviderName.UsState).annotations({
    description: "The US state of the login; required unless `connection_id` is given"
  }),
  connection_id: Schema.optional(Text).annotations({
    description:
      "Update mode without the widget: re-enter the login of this sandbox connection (for example one in `error` after `connection_login_required`), as Plaid's `reset_login` does. The public token it returns exchanges for the same connection; `provider` and `state`, when given, must be the connection's"
  }),
  credentials: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String })).annotations({
    description: "The provider login; defaults to the sandbox's good login"
  }),
  external_id: Schema.optional(Text)
}).annotations({ identifier: "SandboxPublicTokenCreate", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const PublicToken = Schema.Struct({ public_token: Schema.String }).annotations({ identifier: "PublicToken" })

/** @since 0.1.0 @category schemas */
export const ConnectionEnvelope = Envelope.Envelope(Connection.Connection)
