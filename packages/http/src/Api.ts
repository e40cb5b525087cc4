/**
 * The Tracebridge HTTP contract: one `HttpApi` value from which the OpenAPI document, the docs page
 * and the typed client all come. It imports no server code, so an SDK can build a client from it
 * with `HttpApiClient.make(Api)`.
 *
 * @since 0.1.0
 */
import { HttpApi, OpenApi } from "@effect/platform"
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
import { ConnectApi } from "./groups/ConnectApi.js"
import { ConnectionsApi } from "./groups/ConnectionsApi.js"
import { LinkApi } from "./groups/LinkApi.js"
import { OAuthApi } from "./groups/OAuthApi.js"
import { ProvidersApi } from "./groups/ProvidersApi.js"
import { ResourcesApi } from "./groups/ResourcesApi.js"
import { SandboxApi } from "./groups/SandboxApi.js"
import { SyncApi } from "./groups/SyncApi.js"
import { SystemApi } from "./groups/SystemApi.js"
import { WebhooksApi } from "./groups/WebhooksApi.js"
import * as OpenApiDocument from "./OpenApiDocument.js"
import * as OpenApiHeaders from "./OpenApiHeaders.js"
import * as PublicOrigin from "./PublicOrigin.js"

/**
 * The version printed in the OpenAPI document (`info.version`).
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION = "0.1.0"

/**
 * @since 0.1.0
 * @category api
 */
export class Api extends HttpApi.make("tracebridge")
  .add(SystemApi)
  .add(OAuthApi)
  .add(LinkApi)
  .add(ProvidersApi)
  .add(ConnectionsApi)
  .add(ResourcesApi)
  .add(SyncApi)
  .add(SandboxApi)
  .add(WebhooksApi)
  .add(ConnectApi)
  .addError(ValidationError)
  .addError(AuthenticationError)
  .addError(PermissionError)
  .addError(NotFoundError)
  .addError(ConflictError)
  .addError(PayloadTooLarge)
  .addError(MethodNotAllowed)
  .addError(UnsupportedMediaType)
  .addError(UnprocessableError)
  .addError(RateLimitError)
  .addError(InternalError)
  .addError(ServiceUnavailableError)
  .addError(ProviderBadGateway)
  .addError(ProviderUnavailableError)
  .addError(ProviderTimeoutError)
  .annotate(OpenApi.Title, "Tracebridge API")
  .annotate(OpenApi.Version, VERSION)
  .annotate(OpenApi.Transform, (spec) => OpenApiHeaders.addHeaders(OpenApiDocument.polish(spec)))
  .annotate(OpenApi.Servers, [{
    url: PublicOrigin.DEFAULT_ORIGIN,
    description: "Where this document was served from (or `TRACEBRIDGE_PUBLIC_URL`)"
  }])
  .annotate(
    OpenApi.Description,
    "One JSON-over-HTTPS API in front of US state cannabis track-and-trace systems."
  )
{}
