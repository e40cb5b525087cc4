/**
 * `POST /v1/oauth/token`: the client-credentials and refresh-token grants (RFC 6749), with a JSON
 * or form body. Its errors are OAuth bodies, not the envelope.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { OAuthBadRequest, OAuthForbidden, OAuthUnauthorized } from "../Errors.js"
import { errors } from "../OpenApiErrors.js"
import { TokenResponse } from "./Schemas.js"

/**
 * @since 0.1.0
 * @category groups
 */
export class OAuthApi extends HttpApiGroup.make("oauth")
  .annotate(OpenApi.Title, "OAuth")
  .annotate(OpenApi.Description, "Access tokens for API clients (RFC 6749 client credentials and refresh tokens).")
  .add(
    HttpApiEndpoint.post("token", "/v1/oauth/token")
      .annotate(OpenApi.Transform, errors("public", "oauth"))
      .annotate(OpenApi.Summary, "Get an access token")
      .addSuccess(TokenResponse)
      .addError(OAuthBadRequest)
      .addError(OAuthUnauthorized)
      .addError(OAuthForbidden)
      .annotate(
        OpenApi.Description,
        "Body (JSON or application/x-www-form-urlencoded): grant_type (client_credentials | refresh_token), client_id, client_secret, refresh_token, scope. No other properties."
      )
  )
{}
