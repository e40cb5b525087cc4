/**
 * The rules of a link token's `redirect_uri` and of who may frame the Connect page (issue #28,
 * ADR 0019): one place that parses a redirect URI, checks it against the organisation's plan and
 * allow-list of redirect origins, and derives the page's `frame-ancestors` from the link token.
 *
 * @since 0.1.0
 */
import { Either } from "effect"

/** Hosts that are this machine: `localhost`, 127.0.0.0/8 and `[::1]`. */
const isLoopbackHost = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || /^127(?:\.\d{1,3}){3}$/.test(hostname)

/**
 * A redirect URI parsed: an absolute `http(s)` URL with a host, no user or password part and no
 * fragment, at most 2000 characters. The reason when it is not.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (raw: string): Either.Either<URL, string> => {
  if (raw.length > 2000 || /[\s"'<>\\`]/.test(raw)) {
    return Either.left("redirect_uri must be an absolute http(s) URL of at most 2000 characters")
  }
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left("redirect_uri is not a valid URL")
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.hostname === "") {
    return Either.left("redirect_uri must be an absolute http(s) URL")
  }
  if (url.username !== "" || url.password !== "") return Either.left("redirect_uri must not carry a user or password")
  if (url.hash !== "" || raw.includes("#")) return Either.left("redirect_uri must not have a fragment")
  return Either.right(url)
}

/**
 * Whether a redirect URI is one the schema accepts (parsed; the plan and allow-list come later).
 *
 * @since 0.1.0
 * @category parsing
 */
export const isWellFormed = (raw: string): boolean => Either.isRight(parse(raw))

/**
 * An origin as the allow-list keeps it (`https://app.example`, `http://localhost:3000`): an
 * `http(s)` origin with no path, query, user or fragment, lower case. The reason when it is not.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseOrigin = (raw: string): Either.Either<string, string> => {
  const url = parse(raw)
  if (Either.isLeft(url)) return Either.left(`${raw}: not an http(s) origin`)
  const origin = url.right.origin
  if (raw.replace(/\/$/, "").toLowerCase() !== origin.toLowerCase()) {
    return Either.left(`${raw}: an origin has no path, query or fragment (did you mean ${origin}?)`)
  }
  if (url.right.protocol === "http:" && !isLoopbackHost(url.right.hostname)) {
    return Either.left(`${raw}: an origin must be https (http only for localhost, 127.0.0.0/8 and [::1])`)
  }
  return Either.right(origin)
}

/**
 * The reason a redirect URI may not be used by this organisation, or none: it must parse, be
 * `https` in production (`http` only to a loopback host, and only in the sandbox), and have its
 * origin on the organisation's allow-list when the list is not empty.
 *
 * @since 0.1.0
 * @category checks
 */
export const refusal = (
  raw: string,
  organisation: { readonly plan: "sandbox" | "production"; readonly redirect_origins?: ReadonlyArray<string> }
): string | undefined => {
  const parsed = parse(raw)
  if (Either.isLeft(parsed)) return parsed.left
  const url = parsed.right
  if (url.protocol === "http:") {
    if (organisation.plan === "production") return "redirect_uri must be https in production"
    if (!isLoopbackHost(url.hostname)) {
      return "redirect_uri must be https (http only to localhost, 127.0.0.0/8 or [::1], in the sandbox)"
    }
  }
  const allowed = organisation.redirect_origins ?? []
  if (allowed.length > 0 && !allowed.includes(url.origin)) {
    return `redirect_uri's origin ${url.origin} is not one of the organisation's allowed redirect origins`
  }
  return undefined
}

/**
 * The sources of the Connect page's `frame-ancestors` for a link token: `'self'`, the
 * organisation's allowed redirect origins, the origin of the link token's `redirect_uri` (when it
 * parses), and in the sandbox the loopback hosts on any port (a quickstart on `localhost:3000`).
 * Never `*`; nothing from the query string. An unknown link token gets `'self'` (and the loopback
 * hosts if its prefix says sandbox), so the page can still say it cannot be used.
 *
 * @since 0.1.0
 * @category framing
 */
export const frameAncestors = (options: {
  readonly sandbox: boolean
  readonly redirectUri: string | null
  readonly allowedOrigins: ReadonlyArray<string>
}): ReadonlyArray<string> => {
  const sources = ["'self'", ...options.allowedOrigins]
  if (options.redirectUri !== null) {
    const parsed = parse(options.redirectUri)
    if (Either.isRight(parsed)) sources.push(parsed.right.origin)
  }
  if (options.sandbox) sources.push(...loopbackSources)
  return [...new Set(sources)]
}

/**
 * The loopback sources the sandbox may be framed from (CSP has no syntax for `[::1]`).
 *
 * @since 0.1.0
 * @category framing
 */
export const loopbackSources: ReadonlyArray<string> = [
  "http://localhost:*",
  "http://127.0.0.1:*",
  "https://localhost:*",
  "https://127.0.0.1:*"
]
