/**
 * The closed family of errors a provider port can fail with. Each says whose side failed
 * (see {@link side}) and carries enough context to explain itself; the HTTP layer maps each
 * tag to the wire in one place. Adapters return only these, never HTTP or parse errors.
 *
 * @since 0.1.0
 */
import { ParseResult, Schema } from "effect"
import { ProviderName } from "./ProviderName.js"

const context = {
  provider: ProviderName,
  operation: Schema.String.annotations({ description: "e.g. packages.list" }),
  message: Schema.String
}

/**
 * The state system could not be reached or answered with a server error.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderUnavailable extends Schema.TaggedError<ProviderUnavailable>(
  "@tracebridge/core/ProviderError/ProviderUnavailable"
)("ProviderUnavailable", {
  ...context,
  status: Schema.optional(Schema.Number),
  cause: Schema.optional(Schema.Defect)
}) {}

/**
 * The state system did not answer in time.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderTimeout extends Schema.TaggedError<ProviderTimeout>(
  "@tracebridge/core/ProviderError/ProviderTimeout"
)("ProviderTimeout", { ...context, timeout: Schema.optional(Schema.Duration) }) {}

/**
 * The state system kept refusing for rate (after the adapter's own retries).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderRateLimited extends Schema.TaggedError<ProviderRateLimited>(
  "@tracebridge/core/ProviderError/ProviderRateLimited"
)("ProviderRateLimited", { ...context, retryAfter: Schema.optional(Schema.Duration) }) {}

/**
 * The state system answered with something off its own wire schema.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderInvalidResponse extends Schema.TaggedError<ProviderInvalidResponse>(
  "@tracebridge/core/ProviderError/ProviderInvalidResponse"
)("ProviderInvalidResponse", {
  ...context,
  path: Schema.String.annotations({ description: "The offending field, e.g. Data.3.Quantity" })
}) {
  /**
   * Builds the error from a schema failure, naming the first offending field.
   *
   * @since 0.1.0
   */
  static fromParseError(options: {
    readonly provider: ProviderName
    readonly operation: string
    readonly error: ParseResult.ParseError
  }): ProviderInvalidResponse {
    const issues = ParseResult.ArrayFormatter.formatErrorSync(options.error)
    const first = issues[0]
    const path = first === undefined || first.path.length === 0 ? "(root)" : first.path.map(String).join(".")
    return new ProviderInvalidResponse({
      provider: options.provider,
      operation: options.operation,
      path,
      message: `${options.provider} answered ${options.operation} with an invalid ${path}: ${
        first?.message ?? "unexpected shape"
      }`
    })
  }
}

/**
 * The provider login is missing, wrong, locked or expired: the end user must link again.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderLoginRequired extends Schema.TaggedError<ProviderLoginRequired>(
  "@tracebridge/core/ProviderError/ProviderLoginRequired"
)("ProviderLoginRequired", {
  ...context,
  reason: Schema.Literal("invalid_credentials", "account_locked", "session_expired", "missing_credentials")
}) {}

/**
 * The login works but may not do this at this facility.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderPermissionDenied extends Schema.TaggedError<ProviderPermissionDenied>(
  "@tracebridge/core/ProviderError/ProviderPermissionDenied"
)("ProviderPermissionDenied", context) {}

/**
 * The state system refused the request on its merits (validation rows, business rules),
 * carrying its own messages and code.
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderRejected extends Schema.TaggedError<ProviderRejected>(
  "@tracebridge/core/ProviderError/ProviderRejected"
)("ProviderRejected", {
  ...context,
  code: Schema.optional(Schema.String),
  messages: Schema.Array(Schema.String)
}) {}

/**
 * No such object (or not one the caller may see).
 *
 * @since 0.1.0
 * @category errors
 */
export class ResourceNotFound extends Schema.TaggedError<ResourceNotFound>(
  "@tracebridge/core/ProviderError/ResourceNotFound"
)("ResourceNotFound", {
  resource: Schema.String.annotations({ description: "e.g. package" }),
  id: Schema.String,
  message: Schema.String
}) {
  /**
   * @since 0.1.0
   */
  static of(resource: string, id: string): ResourceNotFound {
    return new ResourceNotFound({ resource, id, message: `No ${resource.replace(/_/g, " ")} with id ${id}` })
  }
}

/**
 * The connection's state system does not offer this (e.g. sales deliveries).
 *
 * @since 0.1.0
 * @category errors
 */
export class CapabilityNotEnabled extends Schema.TaggedError<CapabilityNotEnabled>(
  "@tracebridge/core/ProviderError/CapabilityNotEnabled"
)("CapabilityNotEnabled", {
  provider: ProviderName,
  state: Schema.String,
  capability: Schema.String,
  message: Schema.String
}) {}

/**
 * The provider does not serve this state.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnsupportedState extends Schema.TaggedError<UnsupportedState>(
  "@tracebridge/core/ProviderError/UnsupportedState"
)("UnsupportedState", { provider: ProviderName, state: Schema.String, message: Schema.String }) {}

/**
 * A move that the transition tables do not allow.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidStateTransition extends Schema.TaggedError<InvalidStateTransition>(
  "@tracebridge/core/ProviderError/InvalidStateTransition"
)("InvalidStateTransition", {
  machine: Schema.String.annotations({ description: "e.g. Transfer.status" }),
  from: Schema.String,
  to: Schema.String,
  message: Schema.String
}) {}

/**
 * A split asks for more than its sources hold (or draws on a package on hold, or mixes units
 * that cannot convert).
 *
 * @since 0.1.0
 * @category errors
 */
export class InsufficientQuantity extends Schema.TaggedError<InsufficientQuantity>(
  "@tracebridge/core/ProviderError/InsufficientQuantity"
)("InsufficientQuantity", {
  package_id: Schema.String,
  requested: Schema.Number,
  available: Schema.Number,
  unit_of_measure: Schema.String,
  message: Schema.String
}) {}

/**
 * A transfer line names a package that is already on another transfer still on its way (pending
 * or in transit): a package goes on one transfer at a time, as the state systems require.
 * DECISIONS: 422 `package_in_transfer`.
 *
 * @since 0.1.0
 * @category errors
 */
export class PackageInTransfer extends Schema.TaggedError<PackageInTransfer>(
  "@tracebridge/core/ProviderError/PackageInTransfer"
)("PackageInTransfer", {
  /** The line's field, e.g. `packages.0.package_id`. */
  path: Schema.String,
  package_id: Schema.String,
  transfer_id: Schema.String,
  message: Schema.String
}) {}

/**
 * A write against a production connection: writes are for sandbox connections only.
 *
 * @since 0.1.0
 * @category errors
 */
export class SandboxOnly extends Schema.TaggedError<SandboxOnly>("@tracebridge/core/ProviderError/SandboxOnly")(
  "SandboxOnly",
  { operation: Schema.String, message: Schema.String }
) {}

/**
 * A command or query that does not pass its schema.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidInput extends Schema.TaggedError<InvalidInput>("@tracebridge/core/ProviderError/InvalidInput")(
  "InvalidInput",
  { operation: Schema.String, path: Schema.String, message: Schema.String }
) {
  /**
   * @since 0.1.0
   */
  static fromParseError(operation: string, error: ParseResult.ParseError): InvalidInput {
    const first = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    const path = first === undefined || first.path.length === 0 ? "" : first.path.map(String).join(".")
    return new InvalidInput({ operation, path, message: first?.message ?? "invalid input" })
  }
}

/**
 * Every error a provider port can fail with.
 *
 * @since 0.1.0
 * @category models
 */
export type ProviderError =
  | ProviderUnavailable
  | ProviderTimeout
  | ProviderRateLimited
  | ProviderInvalidResponse
  | ProviderLoginRequired
  | ProviderPermissionDenied
  | ProviderRejected
  | ResourceNotFound
  | CapabilityNotEnabled
  | UnsupportedState
  | InvalidStateTransition
  | InsufficientQuantity
  | PackageInTransfer
  | SandboxOnly
  | InvalidInput

/**
 * @since 0.1.0
 * @category schemas
 */
export const ProviderError = Schema.Union(
  ProviderUnavailable,
  ProviderTimeout,
  ProviderRateLimited,
  ProviderInvalidResponse,
  ProviderLoginRequired,
  ProviderPermissionDenied,
  ProviderRejected,
  ResourceNotFound,
  CapabilityNotEnabled,
  UnsupportedState,
  InvalidStateTransition,
  InsufficientQuantity,
  PackageInTransfer,
  SandboxOnly,
  InvalidInput
)

/**
 * Every tag of the family.
 *
 * @since 0.1.0
 * @category constants
 */
export const tags: ReadonlyArray<ProviderError["_tag"]> = ProviderError.members.map((m) => m._tag)

/**
 * Whether a value is one of the family.
 *
 * @since 0.1.0
 * @category guards
 */
export const isProviderError = (u: unknown): u is ProviderError =>
  typeof u === "object" && u !== null && "_tag" in u && (tags as ReadonlyArray<unknown>).includes(u._tag)

/**
 * Whose side failed:
 * - `provider`: the state system is down, slow, rate limiting or answering nonsense (retry later);
 * - `end_user`: the linked login no longer works (re-link through the widget);
 * - `client`: the request itself cannot be served (fix the request).
 *
 * @since 0.1.0
 * @category utils
 */
export const side = (error: ProviderError): "provider" | "end_user" | "client" => {
  switch (error._tag) {
    case "ProviderUnavailable":
    case "ProviderTimeout":
    case "ProviderRateLimited":
    case "ProviderInvalidResponse":
      return "provider"
    case "ProviderLoginRequired":
    case "ProviderPermissionDenied":
      return "end_user"
    default:
      return "client"
  }
}
