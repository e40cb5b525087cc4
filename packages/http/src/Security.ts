/**
 * Bearer authentication of every endpoint but the token endpoint: an organisation access token or
 * a connection token, checked against its stored hash.
 *
 * @since 0.1.0
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Context } from "effect"
import { AuthenticationError } from "./Errors.js"
import type { Principal } from "./services/Auth.js"

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
