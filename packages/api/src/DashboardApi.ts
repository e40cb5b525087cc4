/**
 * The dashboard's internal API (issue #33, ADR 0026): its own `HttpApi`, served by the API under
 * `/dashboard/api/…`, outside `/v1`'s OpenAPI document (the spec keeps dashboard endpoints outside
 * the interface) and outside the public SDK. It is still typed end to end: the dashboard's pages
 * build `HttpApiClient.make(DashboardApi)` from this value, and the server implements it with
 * `HttpApiBuilder.group`. Like `Api.ts`, it imports no server code.
 *
 * Authentication is a session cookie (`tb_session`, HttpOnly, SameSite=Lax, Secure over https);
 * every change (any method but GET) also needs the session's CSRF token in `X-CSRF-Token`. Errors
 * are the contract's envelope (`Errors.ts`), with the same classes and statuses as `/v1`.
 *
 * @since 0.1.0
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Connection as CoreConnection, Fault, ProviderName } from "@tracebridge/core"
import { Context, Schema } from "effect"
import {
  AuthenticationError,
  ConflictError,
  InternalError,
  MethodNotAllowed,
  NotFoundError,
  PayloadTooLarge,
  PermissionError,
  ProviderBadGateway,
  ProviderTimeoutError,
  ProviderUnavailableError,
  RateLimitError,
  ServiceUnavailableError,
  UnprocessableError,
  UnsupportedMediaType,
  ValidationError
} from "./Errors.js"
import { SandboxFault, SandboxReset, Simulate, Simulated } from "./groups/SandboxApi.js"
import { ClientName, LogoUrl, strict } from "./groups/Schemas.js"
import { WebhookCreate as V1WebhookCreate } from "./groups/WebhooksApi.js"

/**
 * The session cookie's name.
 *
 * @since 0.1.0
 * @category constants
 */
export const SESSION_COOKIE = "tb_session"

/**
 * The header every change carries the session's CSRF token in.
 *
 * @since 0.1.0
 * @category constants
 */
export const CSRF_HEADER = "x-csrf-token"

/**
 * Where the internal API is served.
 *
 * @since 0.1.0
 * @category constants
 */
export const PREFIX = "/dashboard/api"

/**
 * The longest overlap a roll may give the old secret: 7 days, in seconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_ROLL_SECONDS = 7 * 86_400

/**
 * A member's role, from the most to the least: owner, admin, developer, viewer.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Role = Schema.Literal("owner", "admin", "developer", "viewer")

/**
 * @since 0.1.0
 * @category models
 */
export type Role = typeof Role.Type

const Email = Schema.String.pipe(
  Schema.trimmed(),
  Schema.maxLength(254),
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an e-mail address" })
)
const Password = Schema.String.pipe(Schema.maxLength(1024))
const NewPassword = Schema.String.pipe(
  Schema.minLength(12, { message: () => "must be at least 12 characters" }),
  Schema.maxLength(1024)
)
const TotpCode = Schema.String.pipe(
  Schema.pattern(/^\d{6}$/, { message: () => "must be the 6 digits the authenticator shows" })
)
/** Epoch milliseconds. */
const Millis = Schema.Number

// ---------------------------------------------------------------------------------------------
// Session
// ---------------------------------------------------------------------------------------------

/** @since 0.1.0 @category schemas */
export const User = Schema.Struct({
  id: Schema.String,
  email: Schema.String,
  totp_enabled: Schema.Boolean
}).annotations({ identifier: "DashboardUser" })

/** @since 0.1.0 @category schemas */
export const Organisation = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  plan: Schema.Literal("sandbox", "production")
}).annotations({ identifier: "DashboardOrganisation" })

/**
 * One of the organisations the signed-in user is a member of, with the role held there.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemberOrganisation = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  role: Role
}).annotations({ identifier: "DashboardMemberOrganisation" })

/**
 * Who is signed in, and the CSRF token every change must send in `X-CSRF-Token`; `organisations`
 * lists every organisation the user may switch the session to (`POST /session/organisation`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Me = Schema.Struct({
  user: User,
  organisation: Organisation,
  role: Role,
  organisations: Schema.Array(MemberOrganisation),
  csrf_token: Schema.String,
  expires_at: Millis
}).annotations({ identifier: "DashboardMe" })

/** @since 0.1.0 @category schemas */
export const SwitchOrganisation = Schema.Struct({
  organisation_id: Schema.String.pipe(Schema.maxLength(200))
}).annotations({ identifier: "DashboardSwitchOrganisation", parseOptions: strict })

// ---------------------------------------------------------------------------------------------
// Single sign-on (OIDC)
// ---------------------------------------------------------------------------------------------

/**
 * Where the sign-in page's "Sign in with SSO" link goes: it answers a redirect to the identity
 * provider (403 `capability_not_enabled` when single sign-on is not configured).
 *
 * @since 0.1.0
 * @category constants
 */
export const SSO_START_PATH = `${PREFIX}/sso/start`

/**
 * The page the identity provider sends the browser back to (the default redirect URL is the
 * public origin followed by this path); it posts its query to `POST /sso/callback`.
 *
 * @since 0.1.0
 * @category constants
 */
export const SSO_CALLBACK_PAGE = "/dashboard/sso/callback"

/** Whether single sign-on is configured (the sign-in page shows its link then). @since 0.1.0 @category schemas */
export const SsoStatus = Schema.Struct({ enabled: Schema.Boolean }).annotations({ identifier: "DashboardSsoStatus" })

/**
 * The identity provider's answer, as the callback page received it: its address's query string
 * (`code`, `state`, `iss`, or `error`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const SsoCallback = Schema.Struct({
  query: Schema.String.pipe(Schema.maxLength(8192))
}).annotations({ identifier: "DashboardSsoCallback", parseOptions: strict })

/** The roles an e-mail domain may give (never owner). @since 0.1.0 @category schemas */
export const SsoDomainRole = Schema.Literal("admin", "developer", "viewer")

/** An e-mail domain the organisation claims for single sign-on. @since 0.1.0 @category schemas */
export const SsoDomain = Schema.Struct({
  domain: Schema.String,
  role: Role.annotations({ description: "The role a person of this domain joins with" }),
  created_at: Millis
}).annotations({ identifier: "DashboardSsoDomain" })

/** @since 0.1.0 @category schemas */
export const SsoDomains = Schema.Struct({ data: Schema.Array(SsoDomain) }).annotations({
  identifier: "DashboardSsoDomains"
})

/** @since 0.1.0 @category schemas */
export const SsoDomainCreate = Schema.Struct({
  domain: Schema.String.pipe(Schema.maxLength(253)),
  role: Schema.optional(SsoDomainRole).annotations({ description: "Default developer" })
}).annotations({ identifier: "DashboardSsoDomainCreate", parseOptions: strict })

const SsoDomainPath = Schema.Struct({ domain: Schema.String.pipe(Schema.maxLength(253)) })

/** @since 0.1.0 @category schemas */
export const SignIn = Schema.Struct({
  email: Email,
  password: Password,
  totp_code: Schema.optional(TotpCode),
  /** Which of the user's organisations to open (default: the oldest membership). */
  organisation_id: Schema.optional(Schema.String)
}).annotations({ identifier: "DashboardSignIn", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const AcceptInvitation = Schema.Struct({
  token: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  email: Email,
  password: NewPassword
}).annotations({ identifier: "DashboardAcceptInvitation", parseOptions: strict })

// ---------------------------------------------------------------------------------------------
// TOTP
// ---------------------------------------------------------------------------------------------

/** @since 0.1.0 @category schemas */
export const TotpEnrolment = Schema.Struct({
  otpauth_uri: Schema.String,
  secret: Schema.String
}).annotations({ identifier: "DashboardTotpEnrolment" })

/** @since 0.1.0 @category schemas */
export const TotpCodeBody = Schema.Struct({ code: TotpCode }).annotations({
  identifier: "DashboardTotpCode",
  parseOptions: strict
})

/** @since 0.1.0 @category schemas */
export const TotpStatus = Schema.Struct({ totp_enabled: Schema.Boolean }).annotations({
  identifier: "DashboardTotpStatus"
})

// ---------------------------------------------------------------------------------------------
// Team
// ---------------------------------------------------------------------------------------------

/** @since 0.1.0 @category schemas */
export const Member = Schema.Struct({
  user_id: Schema.String,
  email: Schema.String,
  role: Role,
  totp_enabled: Schema.Boolean,
  joined_at: Millis
}).annotations({ identifier: "DashboardMember" })

/** @since 0.1.0 @category schemas */
export const Members = Schema.Struct({ data: Schema.Array(Member) }).annotations({ identifier: "DashboardMembers" })

/** @since 0.1.0 @category schemas */
export const InvitationCreate = Schema.Struct({
  email: Email,
  role: Role
}).annotations({ identifier: "DashboardInvitationCreate", parseOptions: strict })

/**
 * A new invitation, with its one-time link (shown in this answer only; stored as a hash).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Invitation = Schema.Struct({
  id: Schema.String,
  email: Schema.NullOr(Schema.String),
  role: Role,
  expires_at: Millis,
  link: Schema.String
}).annotations({ identifier: "DashboardInvitation" })

/** @since 0.1.0 @category schemas */
export const RoleChange = Schema.Struct({ role: Role }).annotations({
  identifier: "DashboardRoleChange",
  parseOptions: strict
})

/** @since 0.1.0 @category schemas */
export const AuditEntry = Schema.Struct({
  id: Schema.String,
  actor: Schema.NullOr(Schema.String).annotations({ description: "The user's e-mail; null for the operator CLI" }),
  action: Schema.String,
  target: Schema.NullOr(Schema.String),
  detail: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  at: Millis
}).annotations({ identifier: "DashboardAuditEntry" })

/** @since 0.1.0 @category schemas */
export const AuditPage = Schema.Struct({
  data: Schema.Array(AuditEntry),
  page: Schema.Int,
  per_page: Schema.Int,
  has_more: Schema.Boolean
}).annotations({ identifier: "DashboardAuditPage" })

const PageNumber = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1_000_000))
const PerPage = Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100))

/** @since 0.1.0 @category schemas */
export const AuditQuery = Schema.Struct({
  page: Schema.optional(PageNumber),
  per_page: Schema.optional(PerPage)
})

// ---------------------------------------------------------------------------------------------
// API keys
// ---------------------------------------------------------------------------------------------

/**
 * An API client as the API Keys page lists it: never its secret or a hash.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKey = Schema.Struct({
  client_id: Schema.String,
  created_at: Millis,
  created_by: Schema.NullOr(Schema.String).annotations({
    description: "The e-mail of the member who made it; null when the operator CLI or the first start did"
  }),
  last_used_at: Schema.NullOr(Millis).annotations({ description: "When a token was last issued for it" }),
  revoked_at: Schema.NullOr(Millis),
  previous_secret_expires_at: Schema.NullOr(Millis).annotations({
    description: "After a roll: until when the old secret still works (null when it no longer does)"
  })
}).annotations({ identifier: "DashboardApiKey" })

/** @since 0.1.0 @category schemas */
export const ApiKeys = Schema.Struct({ data: Schema.Array(ApiKey) }).annotations({ identifier: "DashboardApiKeys" })

/**
 * A client's secret, in the one answer that reveals it (create and roll).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ApiKeySecret = Schema.Struct({
  client_id: Schema.String,
  client_secret: Schema.String,
  previous_secret_expires_at: Schema.NullOr(Millis)
}).annotations({ identifier: "DashboardApiKeySecret" })

/** @since 0.1.0 @category schemas */
export const Roll = Schema.Struct({
  expires_in_seconds: Schema.Int.pipe(Schema.between(0, MAX_ROLL_SECONDS)).annotations({
    description: "How long the old secret keeps working, from now: 0 to 7 days"
  })
}).annotations({ identifier: "DashboardRoll", parseOptions: strict })

const ClientPath = Schema.Struct({ client_id: Schema.String })
const MemberPath = Schema.Struct({ user_id: Schema.String })

// ---------------------------------------------------------------------------------------------
// Security
// ---------------------------------------------------------------------------------------------

/**
 * The signed-in member of a request, as a handler sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionInfo {
  /** The session's stored id (the hash of the cookie's value), never the cookie's value. */
  readonly session_hash: string
  readonly csrf_token: string
  readonly user_id: string
  readonly email: string
  readonly organisation_id: string
  readonly role: Role
  readonly expires_at: number
}

/**
 * The signed-in member (provided by {@link DashboardSession}).
 *
 * @since 0.1.0
 * @category tags
 */
export class CurrentSession extends Context.Tag("Dashboard/CurrentSession")<CurrentSession, SessionInfo>() {}

/**
 * The session cookie, checked on every call but sign-in and accepting an invitation; a change
 * (any method but GET) without the session's CSRF token is refused 403.
 *
 * @since 0.1.0
 * @category middleware
 */
export class DashboardSession extends HttpApiMiddleware.Tag<DashboardSession>()("Dashboard/Session", {
  failure: Schema.Union(AuthenticationError, PermissionError),
  provides: CurrentSession,
  security: { cookie: HttpApiSecurity.apiKey({ in: "cookie", key: SESSION_COOKIE }) }
}) {}

// ---------------------------------------------------------------------------------------------
// Logs
// ---------------------------------------------------------------------------------------------

/** @since 0.1.0 @category schemas */
export const LogsQuery = Schema.Struct({
  status_class: Schema.optional(Schema.Literal("2xx", "4xx", "5xx")),
  route: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  connection_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  request_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  limit: Schema.optional(PerPage)
})

/** One `/v1` request as the Logs page lists it. @since 0.1.0 @category schemas */
export const LogEntry = Schema.Struct({
  request_id: Schema.String,
  at: Millis,
  method: Schema.String,
  route: Schema.String,
  path: Schema.String,
  status: Schema.Int,
  status_class: Schema.String,
  duration_ms: Schema.Number,
  principal: Schema.NullOr(Schema.String),
  connection_id: Schema.NullOr(Schema.String),
  error_code: Schema.NullOr(Schema.String),
  upstream_calls: Schema.Int
})

/** @since 0.1.0 @category schemas */
export const LogPage = Schema.Struct({
  data: Schema.Array(LogEntry),
  next_cursor: Schema.NullOr(Schema.String)
})

/** One upstream call of a request, as the state system answered it. @since 0.1.0 @category schemas */
export const UpstreamCall = Schema.Struct({
  n: Schema.Int,
  at: Millis,
  provider: Schema.String,
  state: Schema.String,
  operation: Schema.NullOr(Schema.String),
  method: Schema.String,
  path: Schema.String,
  status: Schema.NullOr(Schema.Int),
  failure: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number,
  attempt: Schema.Int,
  rate_limited: Schema.Boolean,
  error_code: Schema.NullOr(Schema.String)
})

/** One request with its bodies (redacted) and its upstream calls. @since 0.1.0 @category schemas */
export const LogDetail = Schema.Struct({
  ...LogEntry.fields,
  request_body: Schema.NullOr(Schema.String),
  request_body_truncated: Schema.Boolean,
  error_body: Schema.NullOr(Schema.String),
  upstream: Schema.Array(UpstreamCall)
})

const LogPath = Schema.Struct({ request_id: Schema.String.pipe(Schema.maxLength(200)) })

// ---------------------------------------------------------------------------------------------
// Connections
// ---------------------------------------------------------------------------------------------

/** The Connections page's filters and page. @since 0.1.0 @category schemas */
export const ConnectionsQuery = Schema.Struct({
  status: Schema.optional(CoreConnection.ConnectionStatus),
  provider: Schema.optional(ProviderName.ProviderName),
  state: Schema.optional(ProviderName.UsState),
  external_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  page: Schema.optional(PageNumber),
  per_page: Schema.optional(PerPage)
})

/** One connection as the Connections page lists it. @since 0.1.0 @category schemas */
export const ConnectionEntry = Schema.Struct({
  id: Schema.String,
  external_id: Schema.NullOr(Schema.String),
  provider: Schema.String,
  state: Schema.String,
  status: CoreConnection.ConnectionStatus,
  is_sandbox: Schema.Boolean,
  created_at: Millis,
  updated_at: Millis
}).annotations({ identifier: "DashboardConnection" })

const ConnectionPath = Schema.Struct({ connection_id: Schema.String.pipe(Schema.maxLength(200)) })

/** @since 0.1.0 @category schemas */
export const ConnectionPage = Schema.Struct({
  data: Schema.Array(ConnectionEntry),
  page: Schema.Int,
  per_page: Schema.Int,
  total: Schema.Int,
  has_more: Schema.Boolean
}).annotations({ identifier: "DashboardConnectionPage" })

/** A synced facility on a connection's page: the managed sync's state, and each list's. @since 0.1.0 @category schemas */
export const FacilitySync = Schema.Struct({
  facility_id: Schema.String,
  status: Schema.Literal("backfilling", "live", "error"),
  backfilled_through: Schema.NullOr(Millis),
  last_synced_at: Schema.NullOr(Millis),
  lag_ms: Schema.NullOr(Schema.Number).annotations({ description: "Milliseconds since the last sync; null before it" }),
  lagging: Schema.Boolean.annotations({
    description: "Whether the lag is more than LAG_FACTOR times the poll interval"
  }),
  failing_since: Schema.NullOr(Millis),
  last_error: Schema.NullOr(Schema.String),
  resources: Schema.Array(Schema.Struct({
    type: Schema.String,
    status: Schema.String,
    count: Schema.Int,
    backfilled_through: Schema.NullOr(Millis),
    last_synced_at: Schema.NullOr(Millis),
    last_error: Schema.NullOr(Schema.String)
  }))
}).annotations({ identifier: "DashboardFacilitySync" })

/** Where a webhook delivery stands. @since 0.1.0 @category schemas */
export const DeliveryStatus = Schema.Literal("pending", "succeeded", "failed")

/** One event of a connection and where its deliveries stand. @since 0.1.0 @category schemas */
export const ConnectionEvent = Schema.Struct({
  id: Schema.String,
  type: Schema.String,
  created_at: Millis,
  delivery_status: Schema.Literal("delivered", "pending", "failed"),
  deliveries: Schema.Array(Schema.Struct({
    webhook_id: Schema.String,
    delivery_id: Schema.String,
    status: DeliveryStatus,
    attempts: Schema.Int
  }))
}).annotations({ identifier: "DashboardConnectionEvent" })

/** A connection's last error: its newest failed request, or its newest sync failure. @since 0.1.0 @category schemas */
export const LastError = Schema.Struct({
  at: Millis,
  source: Schema.Literal("request", "sync"),
  message: Schema.String,
  request_id: Schema.NullOr(Schema.String),
  facility_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DashboardLastError" })

/**
 * A connection's page: the connection, its facilities' sync, its recent events with their
 * deliveries, and its recent failed requests.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectionDetail = Schema.Struct({
  connection: Schema.Struct({
    ...ConnectionEntry.fields,
    environment: Schema.Literal("sandbox", "production"),
    needs_relink: Schema.Boolean,
    last_error: Schema.NullOr(LastError)
  }),
  facilities: Schema.Array(FacilitySync),
  events: Schema.Array(ConnectionEvent),
  failed_requests: Schema.Array(LogEntry)
}).annotations({ identifier: "DashboardConnectionDetail" })

/** An update-mode link token that opens the Connect widget on a connection. @since 0.1.0 @category schemas */
export const RelinkToken = Schema.Struct({
  link_token: Schema.String,
  expires_at: Millis
}).annotations({ identifier: "DashboardRelinkToken" })

// ---------------------------------------------------------------------------------------------
// Issues
// ---------------------------------------------------------------------------------------------

/** What an issue is about. @since 0.1.0 @category schemas */
export const IssueKind = Schema.Literal(
  "connection_needs_relink",
  "sync_failed",
  "sync_lagging",
  "webhook_failing",
  "webhook_deliveries_failed",
  "vendor_key_missing"
)

/**
 * One problem of the organisation that needs a person: what it is, how bad, what to do, the ids
 * involved and since when. Issues are computed at each call, so one closes itself once its cause
 * is gone.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Issue = Schema.Struct({
  id: Schema.String.annotations({ description: "Stable while the issue lasts: its kind and ids" }),
  kind: IssueKind,
  severity: Schema.Literal("critical", "warning"),
  message: Schema.String,
  action: Schema.String,
  connection_id: Schema.NullOr(Schema.String),
  facility_id: Schema.NullOr(Schema.String),
  webhook_id: Schema.NullOr(Schema.String),
  count: Schema.NullOr(Schema.Int).annotations({ description: "How many deliveries, for the webhook kinds" }),
  since: Millis
}).annotations({ identifier: "DashboardIssue" })

/** @since 0.1.0 @category schemas */
export const IssuesPage = Schema.Struct({
  data: Schema.Array(Issue),
  truncated: Schema.Boolean.annotations({ description: "Whether more issues exist than the 100 listed" })
}).annotations({ identifier: "DashboardIssues" })

// ---------------------------------------------------------------------------------------------
// Webhooks
// ---------------------------------------------------------------------------------------------

/** How many deliveries stand at each outcome. @since 0.1.0 @category schemas */
export const DeliveryCounts = Schema.Struct({
  succeeded: Schema.Int,
  failed: Schema.Int,
  retrying: Schema.Int,
  pending: Schema.Int
}).annotations({ identifier: "DashboardDeliveryCounts" })

/** A webhook endpoint as the Webhooks page lists it (never its secret). @since 0.1.0 @category schemas */
export const WebhookEntry = Schema.Struct({
  id: Schema.String,
  url: Schema.String,
  events: Schema.Array(Schema.String),
  description: Schema.NullOr(Schema.String),
  status: Schema.Literal("enabled", "disabled"),
  created_at: Millis,
  deliveries_24h: DeliveryCounts
}).annotations({ identifier: "DashboardWebhook" })

/** @since 0.1.0 @category schemas */
export const WebhookList = Schema.Struct({ data: Schema.Array(WebhookEntry) }).annotations({
  identifier: "DashboardWebhooks"
})

/** The delivery list's filter and page. @since 0.1.0 @category schemas */
export const DeliveriesQuery = Schema.Struct({
  status: Schema.optional(DeliveryStatus),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  limit: Schema.optional(PerPage)
})

/** One delivery of an event to an endpoint. @since 0.1.0 @category schemas */
export const DeliveryEntry = Schema.Struct({
  id: Schema.String,
  webhook_id: Schema.String,
  event_id: Schema.String,
  event_type: Schema.String,
  status: DeliveryStatus,
  attempts: Schema.Int,
  last_status_code: Schema.NullOr(Schema.Int),
  next_attempt_at: Schema.NullOr(Millis),
  created_at: Millis,
  updated_at: Millis
}).annotations({ identifier: "DashboardDelivery" })

/** @since 0.1.0 @category schemas */
export const DeliveryPage = Schema.Struct({
  data: Schema.Array(DeliveryEntry),
  next_cursor: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DashboardDeliveryPage" })

/** One attempt of a delivery. @since 0.1.0 @category schemas */
export const DeliveryAttempt = Schema.Struct({
  attempt: Schema.Int,
  at: Millis,
  duration_ms: Schema.Number,
  status_code: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String),
  response_preview: Schema.NullOr(Schema.String).annotations({
    description: "The receiver's answer: its first 2 KB at most, redacted; null when no answer came"
  })
}).annotations({ identifier: "DashboardDeliveryAttempt" })

/** A delivery with every attempt. @since 0.1.0 @category schemas */
export const DeliveryDetail = Schema.Struct({
  ...DeliveryEntry.fields,
  attempt_log: Schema.Array(DeliveryAttempt)
}).annotations({ identifier: "DashboardDeliveryDetail" })

const WebhookPath = Schema.Struct({ webhook_id: Schema.String.pipe(Schema.maxLength(200)) })
const DeliveryPath = Schema.Struct({ delivery_id: Schema.String.pipe(Schema.maxLength(200)) })

/**
 * The most failed deliveries one "resend failed" call queues; a range holding more is refused 400
 * (narrow it).
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_RESEND_FAILED = 1000

/**
 * A new endpoint: `POST /v1/webhooks`' own body (`url`, `events`, `description`).
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookCreate = V1WebhookCreate

/**
 * An edit of an endpoint: its URL, its events or its description (at least one).
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookEdit = Schema.Struct({
  url: Schema.optional(V1WebhookCreate.fields.url),
  events: Schema.optional(V1WebhookCreate.fields.events),
  description: V1WebhookCreate.fields.description
}).annotations({ identifier: "DashboardWebhookEdit", parseOptions: strict })

/**
 * An endpoint with its signing secret (`whsec_…`), in the one answer that shows it (create and
 * rotate). After a rotation the old secret keeps signing beside the new one until
 * `previous_secret_expires_at`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookSecret = Schema.Struct({
  webhook: WebhookEntry,
  secret: Schema.String,
  previous_secret_expires_at: Schema.NullOr(Millis)
}).annotations({ identifier: "DashboardWebhookSecret" })

/**
 * What a test event's one attempt met: it is signed like any delivery, typed `webhook.test`, sent
 * at once and not retried, nor kept among the deliveries.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookTestResult = Schema.Struct({
  event_id: Schema.String,
  event_type: Schema.Literal("webhook.test"),
  delivered: Schema.Boolean.annotations({ description: "Whether the receiver answered 2xx within 10 s" }),
  status_code: Schema.NullOr(Schema.Int),
  duration_ms: Schema.Number,
  error: Schema.NullOr(Schema.String),
  response_preview: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DashboardWebhookTestResult" })

/** Where a delivery stands, with `retrying` (pending after a failed attempt) apart. @since 0.1.0 @category schemas */
export const DeliveryOutcome = Schema.Literal("pending", "retrying", "succeeded", "failed")

const MillisParam = Schema.NumberFromString.pipe(Schema.int(), Schema.between(0, 8_640_000_000_000_000))

/**
 * The deliveries across every endpoint: by endpoint, status or outcome, and creation time
 * (`created_from` and `created_to`, epoch ms, both included), newest first, by cursor.
 *
 * @since 0.1.0
 * @category schemas
 */
export const AllDeliveriesQuery = Schema.Struct({
  webhook_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200))),
  status: Schema.optional(DeliveryStatus),
  outcome: Schema.optional(DeliveryOutcome),
  created_from: Schema.optional(MillisParam),
  created_to: Schema.optional(MillisParam),
  cursor: Schema.optional(Schema.String.pipe(Schema.maxLength(500))),
  limit: Schema.optional(PerPage)
})

const MillisBody = Schema.Int.pipe(Schema.between(0, 8_640_000_000_000_000))

/**
 * Resend every failed delivery made in a time range (epoch ms, both included), optionally of one
 * endpoint; at most {@link MAX_RESEND_FAILED}.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ResendFailed = Schema.Struct({
  created_from: MillisBody,
  created_to: MillisBody,
  webhook_id: Schema.optional(Schema.String.pipe(Schema.maxLength(200)))
}).annotations({ identifier: "DashboardResendFailed", parseOptions: strict })

/** How many failed deliveries were queued again. @since 0.1.0 @category schemas */
export const ResendFailedResult = Schema.Struct({
  queued: Schema.Int,
  created_from: Millis,
  created_to: Millis,
  webhook_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "DashboardResendFailedResult" })

// ---------------------------------------------------------------------------------------------
// Overview
// ---------------------------------------------------------------------------------------------

/**
 * The organisation's webhook deliveries waiting to be sent, now: what the gauges
 * `tracebridge_webhook_pending`, `tracebridge_webhook_oldest_pending_seconds` and
 * `tracebridge_webhook_dead_lettered` count, for this organisation only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const WebhookBacklog = Schema.Struct({
  pending: Schema.Int.annotations({ description: "Deliveries pending now (due, or waiting for a retry)" }),
  oldest_pending_seconds: Schema.NullOr(Schema.Int).annotations({
    description: "How long the oldest pending delivery has waited, in seconds; null when none is pending"
  }),
  dead_lettered: Schema.Int.annotations({
    description: "Deliveries failed for good (every retry spent); resend them from the Webhooks page"
  })
}).annotations({ identifier: "DashboardWebhookBacklog" })

/**
 * How far behind the organisation's managed sync is, now: what the gauges
 * `tracebridge_sync_lag_seconds` and `tracebridge_sync_facilities` show, for this organisation only.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SyncLag = Schema.Struct({
  lag_seconds: Schema.NullOr(Schema.Int).annotations({
    description: "Now minus the oldest last sync among live facilities, in seconds; null when no live facility " +
      "has synced"
  }),
  live: Schema.Int.annotations({ description: "Facilities synced and kept current by polling" }),
  backfilling: Schema.Int.annotations({ description: "Facilities whose history is still being read" }),
  failing: Schema.Int.annotations({
    description: "Facilities whose sync fails: stopped on a refused login, or whose reads fail now (a live one " +
      "among them counts as live too)"
  })
}).annotations({ identifier: "DashboardSyncLag" })

/** The Overview page: the organisation at a glance. @since 0.1.0 @category schemas */
export const Overview = Schema.Struct({
  plan: Schema.Literal("sandbox", "production"),
  connections: Schema.Struct({
    active: Schema.Int,
    pending: Schema.Int,
    error: Schema.Int,
    inactive: Schema.Int
  }),
  requests_24h: Schema.Struct({
    total: Schema.Int,
    "2xx": Schema.Int,
    "3xx": Schema.Int,
    "4xx": Schema.Int,
    "5xx": Schema.Int,
    error_rate: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))).annotations({
      description: "The share of the requests that failed on Tracebridge's or the state system's side (5xx: " +
        "500, and 502, 503 or 504 when the upstream failed), from 0 to 1, rounded to 4 places; null when " +
        "there was no request"
    }),
    client_error_rate: Schema.NullOr(Schema.Number.pipe(Schema.between(0, 1))).annotations({
      description: "The share of the requests refused as sent (4xx: bad input, authentication, not found, a " +
        "connection that needs a relink, a rate limit), from 0 to 1, rounded to 4 places; null when there was " +
        "no request"
    })
  }),
  deliveries_24h: DeliveryCounts,
  open_issues: Schema.Int,
  webhook_backlog: WebhookBacklog,
  sync: SyncLag
}).annotations({ identifier: "DashboardOverview" })

// ---------------------------------------------------------------------------------------------
// Connect
// ---------------------------------------------------------------------------------------------

/**
 * The organisation's Connect defaults: what a link token shows when `POST /v1/link/token/create`
 * does not name its own `client_name` or `logo_url` (the call's own values win).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectSettings = Schema.Struct({
  client_name: Schema.NullOr(Schema.String).annotations({
    description: "The default name; null: the organisation's name"
  }),
  logo_url: Schema.NullOr(Schema.String).annotations({ description: "The default logo; null: none" }),
  organisation_name: Schema.String.annotations({ description: "What the widget shows when client_name is null" }),
  updated_at: Schema.NullOr(Millis).annotations({ description: "When they were last changed; null: never" })
}).annotations({ identifier: "DashboardConnectSettings" })

/**
 * New Connect defaults (admin and up); null clears one (back to the organisation's name, or no
 * logo). The same rules as the link token's fields.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectSettingsUpdate = Schema.Struct({
  client_name: Schema.NullOr(ClientName),
  logo_url: Schema.NullOr(LogoUrl)
}).annotations({ identifier: "DashboardConnectSettingsUpdate", parseOptions: strict })

/**
 * A sandbox link token of the organisation, with its Connect defaults, for the preview: the real
 * widget at `url`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ConnectPreview = Schema.Struct({
  link_token: Schema.String,
  expires_at: Millis,
  url: Schema.String.annotations({
    description: "The Connect page for this link token (a path: /connect?link_token=…)"
  })
}).annotations({ identifier: "DashboardConnectPreview" })

// ---------------------------------------------------------------------------------------------
// Sandbox tools
// ---------------------------------------------------------------------------------------------

/**
 * Which of the sandbox's test logins a new sandbox connection uses (docs/sandbox.md "Test
 * logins"): `good` links, `bad` is refused as a wrong login, `locked` as a locked account.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxLogin = Schema.Literal("good", "bad", "locked")

/**
 * What the Sandbox page offers: the providers and their states, the test logins, the scenarios
 * `POST /v1/sandbox/{id}/simulate` knows, and the fault kinds.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxOptions = Schema.Struct({
  providers: Schema.Array(Schema.Struct({
    name: Schema.String,
    display_name: Schema.String,
    states: Schema.Array(Schema.String)
  })),
  logins: Schema.Array(SandboxLogin),
  scenarios: Schema.Array(Schema.String),
  fault_kinds: Schema.Array(Schema.String)
}).annotations({ identifier: "DashboardSandboxOptions" })

/**
 * A new sandbox connection: `POST /v1/sandbox/public_token/create`, then `POST
 * /v1/link/token/exchange`, as the member's organisation.
 *
 * @since 0.1.0
 * @category schemas
 */
export const SandboxConnectionCreate = Schema.Struct({
  provider: ProviderName.ProviderName,
  state: ProviderName.UsState,
  login: Schema.optional(SandboxLogin).annotations({ description: "The test login (default: good)" }),
  external_id: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)))
}).annotations({ identifier: "DashboardSandboxConnectionCreate", parseOptions: strict })

/** @since 0.1.0 @category schemas */
export const SandboxSimulate = Simulate.annotations({ identifier: "DashboardSandboxSimulate" })

/** @since 0.1.0 @category schemas */
export const SandboxSimulated = Simulated.annotations({ identifier: "DashboardSandboxSimulated" })

/** @since 0.1.0 @category schemas */
export const SandboxFaultState = SandboxFault.annotations({ identifier: "DashboardSandboxFault" })

/** @since 0.1.0 @category schemas */
export const SandboxResetDone = SandboxReset.annotations({ identifier: "DashboardSandboxReset" })

/** @since 0.1.0 @category schemas */
export const SandboxFaultSet = Fault.Fault.annotations({ identifier: "DashboardSandboxFaultSet", parseOptions: strict })

// ---------------------------------------------------------------------------------------------
// Groups
// ---------------------------------------------------------------------------------------------

/**
 * Signing in and out. Sign-in, accepting an invitation and single sign-on (its status, its start,
 * which redirects to the identity provider, and its callback) are open; `me`, sign-out and
 * switching the session to another of the user's organisations need the session.
 *
 * @since 0.1.0
 * @category groups
 */
export class SessionGroup extends HttpApiGroup.make("session")
  .add(HttpApiEndpoint.post("signIn", "/session").setPayload(SignIn).addSuccess(Me))
  .add(HttpApiEndpoint.post("acceptInvitation", "/invitations/accept").setPayload(AcceptInvitation).addSuccess(Me))
  .add(HttpApiEndpoint.get("sso", "/sso").addSuccess(SsoStatus))
  .add(HttpApiEndpoint.get("ssoStart", "/sso/start").addSuccess(Schema.Void, { status: 302 }))
  .add(HttpApiEndpoint.post("ssoCallback", "/sso/callback").setPayload(SsoCallback).addSuccess(Me))
  .add(
    HttpApiEndpoint.get("me", "/session").addSuccess(Me).middleware(DashboardSession)
  )
  .add(
    HttpApiEndpoint.del("signOut", "/session").addSuccess(Schema.Void, { status: 204 }).middleware(DashboardSession)
  )
  .add(
    HttpApiEndpoint.post("switchOrganisation", "/session/organisation").setPayload(SwitchOrganisation).addSuccess(Me)
      .middleware(DashboardSession)
  )
{}

/**
 * The signed-in user's second factor.
 *
 * @since 0.1.0
 * @category groups
 */
export class TotpGroup extends HttpApiGroup.make("totp")
  .add(HttpApiEndpoint.post("enrol", "/totp/enrol").addSuccess(TotpEnrolment))
  .add(HttpApiEndpoint.post("confirm", "/totp/confirm").setPayload(TotpCodeBody).addSuccess(TotpStatus))
  .add(HttpApiEndpoint.post("disable", "/totp/disable").setPayload(TotpCodeBody).addSuccess(TotpStatus))
  .middleware(DashboardSession)
{}

/**
 * The organisation's members, invitations, audit log and single sign-on domains.
 *
 * @since 0.1.0
 * @category groups
 */
export class TeamGroup extends HttpApiGroup.make("team")
  .add(HttpApiEndpoint.get("members", "/members").addSuccess(Members))
  .add(HttpApiEndpoint.post("invite", "/invitations").setPayload(InvitationCreate).addSuccess(Invitation))
  .add(
    HttpApiEndpoint.patch("changeRole", "/members/:user_id").setPath(MemberPath).setPayload(RoleChange).addSuccess(
      Member
    )
  )
  .add(
    HttpApiEndpoint.del("removeMember", "/members/:user_id").setPath(MemberPath).addSuccess(Schema.Void, {
      status: 204
    })
  )
  .add(HttpApiEndpoint.get("audit", "/audit").setUrlParams(AuditQuery).addSuccess(AuditPage))
  .add(HttpApiEndpoint.get("ssoDomains", "/sso/domains").addSuccess(SsoDomains))
  .add(
    HttpApiEndpoint.post("addSsoDomain", "/sso/domains").setPayload(SsoDomainCreate).addSuccess(SsoDomain, {
      status: 201
    })
  )
  .add(
    HttpApiEndpoint.del("removeSsoDomain", "/sso/domains/:domain").setPath(SsoDomainPath).addSuccess(Schema.Void, {
      status: 204
    })
  )
  .middleware(DashboardSession)
{}

/**
 * The API Keys page: the organisation's API clients.
 *
 * @since 0.1.0
 * @category groups
 */
export class KeysGroup extends HttpApiGroup.make("keys")
  .add(HttpApiEndpoint.get("list", "/keys").addSuccess(ApiKeys))
  .add(HttpApiEndpoint.post("create", "/keys").addSuccess(ApiKeySecret, { status: 201 }))
  .add(
    HttpApiEndpoint.post("roll", "/keys/:client_id/roll").setPath(ClientPath).setPayload(Roll).addSuccess(ApiKeySecret)
  )
  .add(HttpApiEndpoint.post("revoke", "/keys/:client_id/revoke").setPath(ClientPath).addSuccess(ApiKey))
  .middleware(DashboardSession)
{}

/**
 * The Logs page: the organisation's `/v1` requests, newest first, each with its upstream calls.
 * Every role reads it (what is stored is redacted).
 *
 * @since 0.1.0
 * @category groups
 */
export class LogsGroup extends HttpApiGroup.make("logs")
  .add(HttpApiEndpoint.get("list", "/logs").setUrlParams(LogsQuery).addSuccess(LogPage))
  .add(HttpApiEndpoint.get("get", "/logs/:request_id").setPath(LogPath).addSuccess(LogDetail))
  .middleware(DashboardSession)
{}

/**
 * The Connections page: the organisation's connections, filtered and paged (every role reads it);
 * deleting one (developer and up) runs `DELETE /v1/connections/{id}`'s code.
 *
 * @since 0.1.0
 * @category groups
 */
export class ConnectionsGroup extends HttpApiGroup.make("connections")
  .add(HttpApiEndpoint.get("list", "/connections").setUrlParams(ConnectionsQuery).addSuccess(ConnectionPage))
  .add(HttpApiEndpoint.get("get", "/connections/:connection_id").setPath(ConnectionPath).addSuccess(ConnectionDetail))
  .add(
    HttpApiEndpoint.del("remove", "/connections/:connection_id").setPath(ConnectionPath).addSuccess(ConnectionEntry)
  )
  .add(
    HttpApiEndpoint.post("relink", "/connections/:connection_id/relink").setPath(ConnectionPath).addSuccess(
      RelinkToken
    )
  )
  .middleware(DashboardSession)
{}

/**
 * The Issues feed: the organisation's problems that need a person, newest first (every role).
 *
 * @since 0.1.0
 * @category groups
 */
export class IssuesGroup extends HttpApiGroup.make("issues")
  .add(HttpApiEndpoint.get("list", "/issues").addSuccess(IssuesPage))
  .middleware(DashboardSession)
{}

/**
 * The Webhooks page: the organisation's endpoints with their last day's deliveries, the
 * deliveries across them and each endpoint's, one delivery's attempts (every role); managing the
 * endpoints (create, edit, rotate the secret, disable, enable, a test event), a resend, and a
 * resend of every failed delivery in a time range (developer and up).
 *
 * @since 0.1.0
 * @category groups
 */
export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(HttpApiEndpoint.get("list", "/webhooks").addSuccess(WebhookList))
  .add(HttpApiEndpoint.post("create", "/webhooks").setPayload(WebhookCreate).addSuccess(WebhookSecret, { status: 201 }))
  .add(
    HttpApiEndpoint.patch("edit", "/webhooks/:webhook_id").setPath(WebhookPath).setPayload(WebhookEdit).addSuccess(
      WebhookEntry
    )
  )
  .add(
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:webhook_id/rotate_secret").setPath(WebhookPath).addSuccess(
      WebhookSecret
    )
  )
  .add(HttpApiEndpoint.post("disable", "/webhooks/:webhook_id/disable").setPath(WebhookPath).addSuccess(WebhookEntry))
  .add(HttpApiEndpoint.post("enable", "/webhooks/:webhook_id/enable").setPath(WebhookPath).addSuccess(WebhookEntry))
  .add(HttpApiEndpoint.post("test", "/webhooks/:webhook_id/test").setPath(WebhookPath).addSuccess(WebhookTestResult))
  .add(HttpApiEndpoint.get("allDeliveries", "/deliveries").setUrlParams(AllDeliveriesQuery).addSuccess(DeliveryPage))
  .add(
    HttpApiEndpoint.post("resendFailed", "/deliveries/resend_failed").setPayload(ResendFailed).addSuccess(
      ResendFailedResult
    )
  )
  .add(
    HttpApiEndpoint.get("deliveries", "/webhooks/:webhook_id/deliveries").setPath(WebhookPath).setUrlParams(
      DeliveriesQuery
    ).addSuccess(DeliveryPage)
  )
  .add(HttpApiEndpoint.get("delivery", "/deliveries/:delivery_id").setPath(DeliveryPath).addSuccess(DeliveryDetail))
  .add(
    HttpApiEndpoint.post("resend", "/deliveries/:delivery_id/resend").setPath(DeliveryPath).addSuccess(DeliveryDetail)
  )
  .middleware(DashboardSession)
{}

/**
 * The Overview page (every role).
 *
 * @since 0.1.0
 * @category groups
 */
export class OverviewGroup extends HttpApiGroup.make("overview")
  .add(HttpApiEndpoint.get("get", "/overview").addSuccess(Overview))
  .middleware(DashboardSession)
{}

/**
 * The Connect page: the organisation's Connect defaults (every role reads them, admin and up change
 * them, audited), and a preview link token (developer and up).
 *
 * @since 0.1.0
 * @category groups
 */
export class ConnectGroup extends HttpApiGroup.make("connect")
  .add(HttpApiEndpoint.get("settings", "/connect/settings").addSuccess(ConnectSettings))
  .add(HttpApiEndpoint.put("update", "/connect/settings").setPayload(ConnectSettingsUpdate).addSuccess(ConnectSettings))
  .add(HttpApiEndpoint.post("preview", "/connect/preview").addSuccess(ConnectPreview))
  .middleware(DashboardSession)
{}

/**
 * The Sandbox page: make a sandbox connection, and run `/v1/sandbox`'s own code on one (simulate,
 * reset, set and clear a fault). Every role reads; developer and up act, audited.
 *
 * @since 0.1.0
 * @category groups
 */
export class SandboxGroup extends HttpApiGroup.make("sandbox")
  .add(HttpApiEndpoint.get("options", "/sandbox").addSuccess(SandboxOptions))
  .add(
    HttpApiEndpoint.post("create", "/sandbox/connections").setPayload(SandboxConnectionCreate).addSuccess(
      ConnectionEntry,
      { status: 201 }
    )
  )
  .add(
    HttpApiEndpoint.post("simulate", "/sandbox/connections/:connection_id/simulate").setPath(ConnectionPath)
      .setPayload(SandboxSimulate).addSuccess(SandboxSimulated)
  )
  .add(
    HttpApiEndpoint.post("reset", "/sandbox/connections/:connection_id/reset").setPath(ConnectionPath).addSuccess(
      SandboxResetDone
    )
  )
  .add(
    HttpApiEndpoint.get("fault", "/sandbox/connections/:connection_id/fault").setPath(ConnectionPath).addSuccess(
      SandboxFaultState
    )
  )
  .add(
    HttpApiEndpoint.put("setFault", "/sandbox/connections/:connection_id/fault").setPath(ConnectionPath)
      .setPayload(SandboxFaultSet).addSuccess(SandboxFaultState)
  )
  .add(
    HttpApiEndpoint.del("clearFault", "/sandbox/connections/:connection_id/fault").setPath(ConnectionPath)
      .addSuccess(SandboxFaultState)
  )
  .middleware(DashboardSession)
{}

/**
 * The dashboard's internal API, under {@link PREFIX}.
 *
 * @since 0.1.0
 * @category api
 */
export class DashboardApi extends HttpApi.make("dashboard")
  .add(SessionGroup)
  .add(TotpGroup)
  .add(TeamGroup)
  .add(KeysGroup)
  .add(LogsGroup)
  .add(ConnectionsGroup)
  .add(IssuesGroup)
  .add(WebhooksGroup)
  .add(OverviewGroup)
  .add(ConnectGroup)
  .add(SandboxGroup)
  .prefix(PREFIX)
  .addError(ValidationError)
  .addError(AuthenticationError)
  .addError(PermissionError)
  .addError(NotFoundError)
  .addError(ConflictError)
  .addError(PayloadTooLarge)
  .addError(UnsupportedMediaType)
  .addError(RateLimitError)
  .addError(InternalError)
  .addError(ServiceUnavailableError)
  // the connection actions run `/v1`'s code, which may answer any of its errors
  .addError(MethodNotAllowed)
  .addError(UnprocessableError)
  .addError(ProviderBadGateway)
  .addError(ProviderUnavailableError)
  .addError(ProviderTimeoutError)
{}
