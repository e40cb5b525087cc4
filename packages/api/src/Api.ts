/**
 * The Tracebridge HTTP contract: one `HttpApi` value from which the OpenAPI document, the docs page
 * and the typed client all come. Its package depends on core and the provider catalog only: it
 * loads no server code, persistence, sandbox or emulator (a test proves it), so an SDK can build a
 * client from it with `HttpApiClient.make(Api)` (ADR 0022).
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
import { EventsApi } from "./groups/EventsApi.js"
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

/**
 * The version printed in the OpenAPI document (`info.version`).
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION = "0.1.0"

/**
 * The origin the document names when nothing better is known (a local `npm start`); the server
 * names its public origin instead (http's `PublicOrigin`).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_ORIGIN = "http://127.0.0.1:4000"

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
  .add(EventsApi)
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
    url: DEFAULT_ORIGIN,
    description: "Where this document was served from (or `TRACEBRIDGE_PUBLIC_URL`)"
  }])
  .annotate(
    OpenApi.Description,
    "One JSON-over-HTTPS API in front of US state cannabis track-and-trace systems."
  )
{}
