/**
 * Where clients reach this API (issue #30): the OpenAPI document's `servers` entry and the docs
 * page name it, so that a copied example works whatever `PORT` is.
 *
 * - `TRACEBRIDGE_PUBLIC_URL` (an `http(s)://host[:port]` origin), when set: behind a proxy or a
 *   load balancer, the one URL clients use;
 * - otherwise the request's own `Host` (with `https` when a proxy says `X-Forwarded-Proto: https`).
 *   A `Host` that is not a plain host name or address falls back to the default.
 *
 * @since 0.1.0
 */
import type { HttpServerRequest } from "@effect/platform"
import * as Api from "@tracebridge/api/Api"
import type { Config } from "effect"
import { Option } from "effect"
import * as AppConfig from "./AppConfig.js"

/**
 * The origin the document names when nothing better is known (a local `npm start`; the
 * contract's `Api.DEFAULT_ORIGIN`).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_ORIGIN = Api.DEFAULT_ORIGIN

/**
 * `TRACEBRIDGE_PUBLIC_URL`, as an origin (no path, no trailing slash); unset is `None`.
 *
 * @since 0.1.0
 * @category config
 */
export const configured: Config.Config<Option.Option<string>> = AppConfig.publicUrl

const plainHost =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * The origin clients reach this request's API at.
 *
 * @since 0.1.0
 * @category origins
 */
export const of = (request: HttpServerRequest.HttpServerRequest, publicUrl: Option.Option<string>): string => {
  if (Option.isSome(publicUrl)) return publicUrl.value
  const host = request.headers.host
  if (host === undefined || !plainHost.test(host)) return DEFAULT_ORIGIN
  const proto = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim() === "https" ? "https" : "http"
  return `${proto}://${host}`
}
