/**
 * Bearer authentication of every endpoint but the token endpoint, as the contract declares it: an
 * organisation access token or a connection token. The server implements the middleware (it checks
 * the token against its stored hash); the contract only says who the caller is.
 *
 * @since 0.1.0
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import { AuthenticationError } from "./Errors.js"

/**
 * The organisation a caller belongs to, as a handler sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface Organisation {
  readonly id: string
  readonly name: string
  readonly plan: "sandbox" | "production"
  readonly created_at: number
  /**
   * The origins a link token's `redirect_uri` may point to (issue #28, ADR 0019); empty or absent:
   * any origin the plan allows. They may also frame the Connect page.
   */
  readonly redirect_origins?: ReadonlyArray<string>
  /**
   * Its Connect defaults (set on the dashboard's Connect page): the `client_name` and `logo_url`
   * of a link token that names none; absent: the organisation's name, and no logo.
   */
  readonly connect_client_name?: string
  readonly connect_logo_url?: string
}

/**
 * Who is calling.
 *
 * @since 0.1.0
 * @category models
 */
export interface Principal {
  readonly organisation: Organisation
  readonly kind: "access" | "connection"
  /** The API client an access token was issued to (null for a connection token). */
  readonly client_id: string | null
  /** Set for a connection token: the one connection it may reach. */
  readonly connection_id: string | null
  readonly scopes: ReadonlyArray<string>
}

/**
 * Who is calling (provided by {@link Authentication}).
 *
 * @since 0.1.0
 * @category tags
 */
export class CurrentPrincipal extends Context.Tag("Security/CurrentPrincipal")<CurrentPrincipal, Principal>() {}

/**
 * @since 0.1.0
 * @category middleware
 */
export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("Security/Authentication", {
  failure: AuthenticationError,
  provides: CurrentPrincipal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
