/**
 * Every configuration value the service reads, in one place, from the environment.
 *
 * | variable | default | what |
 * |---|---|---|
 * | `PORT` | 4000 | the port |
 * | `HOST` | 127.0.0.1 | the interface (0.0.0.0 in a container) |
 * | `TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS` | 30 | after SIGTERM, how long requests still in flight may take before their connections are cut |
 * | `TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS` | 10 | a connection whose request headers are not complete this long after their first byte (or after it opened) is answered 408 and closed (`Server.ts`) |
 * | `TRACEBRIDGE_REQUEST_TIMEOUT_SECONDS` | 60 | the same for the whole request, headers and body (not the time the handler takes); at least the headers timeout |
 * | `TRACEBRIDGE_KEEP_ALIVE_TIMEOUT_SECONDS` | 65 | how long a keep-alive connection may idle between requests; keep it above the idle timeout of a load balancer in front (60 s on AWS) |
 * | `TRACEBRIDGE_SOCKET_IDLE_TIMEOUT_SECONDS` | 120 | a connection on which nothing moves this long, while no request on it is being worked on, is closed (a client that stopped reading); 0: off |
 * | `DATABASE_URL` | none | Postgres; without it, SQLite in the data folder |
 * | `TRACEBRIDGE_DATA_DIR` | `./.tracebridge` | the embedded database and the dev encryption key |
 * | `TRACEBRIDGE_ENCRYPTION_KEY` | a dev key kept in the data folder | base64 of 32 bytes; required in production; the key new ciphertexts use |
 * | `TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS` | none | comma-separated base64 32-byte keys that still decrypt (rotation; `npm run admin -- reencrypt` moves rows off them) |
 * | `TRACEBRIDGE_CLIENT_ID`, `TRACEBRIDGE_CLIENT_SECRET` | generated | fix the first sandbox client's credentials |
 * | `TRACEBRIDGE_SANDBOX_SEED` | 42 | the sandbox worlds' seed |
 * | `TRACEBRIDGE_SANDBOX_SIZE` | small | the sandbox worlds' size: `small` (40 packages per facility), `large` (2,000), or a number of packages per facility (`Generate.ts`) |
 * | `TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK` | sample | how much of a production connection's provider answers is validated against the core schemas: `sample` (the first item of each list window; a get, a facility list and a chain of custody whole) or `all` (every item); sandbox connections' always whole; another value stops the start-up (ADR 0031) |
 * | `TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS` | 30 | one deadline for all of a `/v1` request's calls to the state system, retries included; then 504 `provider_timeout` with `Retry-After` (more than 0, at most 300) |
 * | `TRACEBRIDGE_<PROVIDER>_BASE_URL_<STATE>`, `TRACEBRIDGE_<PROVIDER>_BASE_URL` | the descriptor's | where production connections of a provider reach its state system (`{state}` is replaced by the state code); e.g. `TRACEBRIDGE_PROVIDER_A_BASE_URL_CA` |
 * | each provider's own settings | | read by its adapter's module (`ProviderModule.production`), e.g. a vendor key; see the adapter's README |
 * | `TRACEBRIDGE_ACCESS_LOG_EVERY` | 100 | log one successful response in this many (1: all; 0: none); errors always (`RequestLog.ts`) |
 * | `TRACEBRIDGE_LOG_FORMAT` | text | `text` (one readable line) or `json` (one JSON object per line, with `trace_id`/`span_id`; `LogFormat.ts`); both redacted; another value stops the start-up |
 * | `TRACEBRIDGE_DRAIN_SECONDS` | 0 | after SIGTERM, how long the node keeps serving with `/readyz` at 503 `draining` before it stops accepting connections (`Readiness.ts`) |
 * | `TRACEBRIDGE_SANDBOX_CACHE_ENTRIES` | 500 | sandbox read answers kept by world version; 0: off (the sandbox's `ReadCache`, wired in `services/Providers.ts`) |
 * | `TRACEBRIDGE_METRICS_PORT` | none | Prometheus metrics at `GET /metrics` on a listener of its own (`MetricsServer.ts`, `docs/operations.md`); none of the `TRACEBRIDGE_METRICS_*` set: no metrics at all |
 * | `TRACEBRIDGE_METRICS_HOST` | `HOST` | the interface of that listener |
 * | `TRACEBRIDGE_METRICS_TOKEN` | none | `GET /metrics` on the main port, to `Authorization: Bearer <token>` only (401 otherwise) |
 * | `TRACEBRIDGE_METRICS_OTLP` | false | also push the metrics over OTLP/HTTP (`OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` or `OTEL_EXPORTER_OTLP_ENDPOINT`) |
 * | `TRACEBRIDGE_REQUEST_LOG` | on | `off`: the request log captures nothing (`RequestLogCapture.ts`, `docs/request-log.md`) |
 * | `TRACEBRIDGE_REQUEST_LOG_DAYS` | 14 | request log entries older than this are pruned (1 to 365) |
 * | `TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE` | 10000 | request log entries waiting for the writer before new ones are dropped and counted |
 * | `TRACEBRIDGE_OIDC_ISSUER` | none | the dashboard's single sign-on: the OpenID provider's issuer URL (https; http only on a loopback host); unset: no SSO (`docs/dashboard.md`, ADR 0029) |
 * | `TRACEBRIDGE_OIDC_CLIENT_ID`, `TRACEBRIDGE_OIDC_CLIENT_SECRET` | none | the dashboard's client at that provider (both required with the issuer; the secret is never logged or answered) |
 * | `TRACEBRIDGE_OIDC_REDIRECT_URL` | the public origin + `/dashboard/sso/callback` | the redirect URL registered at the provider |
 *
 * Traces (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, `OTEL_TRACES_SAMPLER*`, …) are read in `Tracing.ts`.
 * The rate limit (`TRACEBRIDGE_RATE_LIMIT_*`) is in `RateLimit.ts` and `docs/limits.md`; the webhook
 * worker (`TRACEBRIDGE_WEBHOOK_*`, `TRACEBRIDGE_POLL_INTERVAL_SECONDS`) in `WebhookConfig.ts`.
 *
 * @since 0.1.0
 */
import type { Redacted } from "effect"
import { Config, ConfigError, Duration, Either, Option } from "effect"

const seconds = (name: string, defaultSeconds: number, zeroAllowed = false) =>
  Config.number(name).pipe(
    Config.validate(
      zeroAllowed
        ? { message: `${name} must be >= 0`, validation: (n) => n >= 0 }
        : { message: `${name} must be > 0`, validation: (n) => n > 0 }
    ),
    Config.withDefault(defaultSeconds)
  )

/**
 * The HTTP server's timeouts against slow clients (`Server.Timeouts`, where Node's semantics are
 * explained); Node's checking interval stays at `Server.defaultTimeouts`' 1 s.
 *
 * @since 0.1.0
 * @category config
 */
export const serverTimeouts = Config.all({
  headers: seconds("TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS", 10),
  request: seconds("TRACEBRIDGE_REQUEST_TIMEOUT_SECONDS", 60),
  keepAlive: seconds("TRACEBRIDGE_KEEP_ALIVE_TIMEOUT_SECONDS", 65),
  socketIdle: seconds("TRACEBRIDGE_SOCKET_IDLE_TIMEOUT_SECONDS", 120, true)
}).pipe(
  Config.validate({
    message: "TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS must not be more than TRACEBRIDGE_REQUEST_TIMEOUT_SECONDS",
    validation: (t) => t.headers <= t.request
  }),
  Config.map((t) => ({
    headers: Duration.seconds(t.headers),
    request: Duration.seconds(t.request),
    keepAlive: Duration.seconds(t.keepAlive),
    socketIdle: Duration.seconds(t.socketIdle)
  }))
)

/**
 * @since 0.1.0
 * @category config
 */
export const server = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(4000)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  shutdownGrace: Config.number("TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS").pipe(
    Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 }),
    Config.withDefault(30),
    Config.map((seconds) => Duration.seconds(seconds))
  ),
  timeouts: serverTimeouts
})

/**
 * @since 0.1.0
 * @category config
 */
export const dataDir = Config.string("TRACEBRIDGE_DATA_DIR").pipe(Config.withDefault("./.tracebridge"))

/**
 * @since 0.1.0
 * @category config
 */
export const encryptionKey = Config.option(Config.redacted("TRACEBRIDGE_ENCRYPTION_KEY"))

/**
 * Older keys, still used to decrypt: comma-separated base64 of 32 bytes each.
 *
 * @since 0.1.0
 * @category config
 */
export const encryptionKeysPrevious = Config.option(Config.redacted("TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS"))

/**
 * @since 0.1.0
 * @category config
 */
export const bootstrapClient = Config.all({
  id: Config.option(Config.string("TRACEBRIDGE_CLIENT_ID")),
  secret: Config.option(Config.redacted("TRACEBRIDGE_CLIENT_SECRET"))
})

/**
 * @since 0.1.0
 * @category config
 */
export const sandboxSeed = Config.string("TRACEBRIDGE_SANDBOX_SEED").pipe(Config.withDefault("42"))

/**
 * How many sandbox read answers each process keeps by world version (the sandbox's `ReadCache`
 * over an `Lru`); 0 turns the cache off.
 *
 * @since 0.1.0
 * @category config
 */
export const sandboxCacheEntries = Config.integer("TRACEBRIDGE_SANDBOX_CACHE_ENTRIES").pipe(
  Config.validate({ message: "must be >= 0", validation: (n) => n >= 0 }),
  Config.withDefault(500)
)

/**
 * The size of the sandbox worlds: `small`, `large`, or a whole number of packages per facility.
 *
 * @since 0.1.0
 * @category config
 */
export const sandboxSize: Config.Config<"small" | "large" | { readonly packages: number }> = Config.string(
  "TRACEBRIDGE_SANDBOX_SIZE"
).pipe(
  Config.validate({
    message: "must be small, large or a whole number of packages (1 or more)",
    validation: (s) => s === "small" || s === "large" || (/^[0-9]+$/.test(s) && Number(s) >= 1)
  }),
  Config.withDefault("small"),
  Config.map((s) => (s === "small" || s === "large" ? s : { packages: Number(s) }))
)

/**
 * `TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK` (default `sample`, or `all`): how much of a production
 * connection's provider answers the ports validate against the core schemas (`ProviderPort`'s
 * `OutputCheck`, ADR 0031). Sandbox connections' answers are always checked whole; `none` is not
 * offered, because answers HttpApi encodes itself (a facility list) must be checked.
 *
 * @since 0.1.0
 * @category config
 */
export const productionOutputCheck: Config.Config<"sample" | "all"> = Config.string(
  "TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK"
).pipe(
  Config.validate({
    message: "must be sample or all",
    validation: (s): s is "sample" | "all" => s === "sample" || s === "all"
  }),
  Config.withDefault("sample" as const)
)

/**
 * `TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS` (default 30, more than 0 and at most 300): the one deadline
 * of a `/v1` request's calls to the state system, every try and retry included. A state system
 * that has not answered by then gets 504 `provider_timeout` with `Retry-After`; the adapters see
 * the deadline and do not retry past it (`services/Providers.ts`, `@tracebridge/core` `Deadline`).
 *
 * @since 0.1.0
 * @category config
 */
export const upstreamDeadline: Config.Config<Duration.Duration> = Config.number(
  "TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS"
).pipe(
  Config.validate({ message: "must be more than 0 and at most 300", validation: (n) => n > 0 && n <= 300 }),
  Config.withDefault(30),
  Config.map((seconds) => Duration.seconds(seconds))
)

/**
 * The upstream base URL overrides of one provider (DECISIONS "Upstream base URLs"):
 * `TRACEBRIDGE_<PROVIDER>_BASE_URL_<STATE>` for one state, else `TRACEBRIDGE_<PROVIDER>_BASE_URL`
 * for all of them (a `{state}` in it is replaced by the state code, e.g.
 * `http://127.0.0.1:4010/provider_a/{state}` for a standalone sandbox). Each must be an http(s) URL.
 * Production connections then call that host instead of the descriptor's: a state's test system,
 * a recorded fake, or the standalone sandbox.
 *
 * @since 0.1.0
 * @category config
 */
export const upstreamBaseUrls = (provider: string, states: ReadonlyArray<string>) => {
  const prefix = `TRACEBRIDGE_${provider.toUpperCase()}_BASE_URL`
  const url = (name: string) =>
    Config.option(
      Config.string(name).pipe(Config.validate({
        message: `${name} must be an http(s) URL`,
        validation: (value) => /^https?:\/\/[^\s/]+/.test(value)
      }))
    )
  return Config.all({
    all: url(prefix),
    byState: Config.all(Object.fromEntries(states.map((state) => [state, url(`${prefix}_${state}`)])))
  }).pipe(
    Config.map(({ all, byState }) => (state: string): string | undefined => {
      const own = byState[state]
      if (own !== undefined && own._tag === "Some") return own.value
      return all._tag === "Some" ? all.value.replaceAll("{state}", state) : undefined
    })
  )
}

/**
 * `TRACEBRIDGE_PUBLIC_URL`, as an origin (no path, no trailing slash); unset is `None`. Where
 * clients reach this API (`PublicOrigin.ts`), and where the links the CLI and the first start print
 * point.
 *
 * @since 0.1.0
 * @category config
 */
export const publicUrl: Config.Config<Option.Option<string>> = Config.option(
  Config.string("TRACEBRIDGE_PUBLIC_URL").pipe(
    Config.mapOrFail((text) => {
      try {
        const url = new URL(text.trim())
        if ((url.protocol !== "http:" && url.protocol !== "https:") || url.username !== "" || url.password !== "") {
          throw new Error("not an origin")
        }
        if (url.pathname !== "/" || url.search !== "" || url.hash !== "") throw new Error("has a path")
        return Either.right(url.origin)
      } catch {
        return Either.left(
          ConfigError.InvalidData([], "must be an http:// or https:// origin, e.g. https://api.example.com")
        )
      }
    })
  )
)

/**
 * The dashboard's single sign-on settings (`oidc`).
 *
 * @since 0.1.0
 * @category config
 */
export interface OidcOptions {
  readonly issuer: URL
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted
  readonly redirectUrl: Option.Option<string>
}

const loopback = new Set(["127.0.0.1", "localhost", "[::1]"])

/**
 * The dashboard's single sign-on (OIDC, ADR 0029): `None` when `TRACEBRIDGE_OIDC_ISSUER` is unset.
 * With it, the client id and secret are required. The issuer must be https (http only on a
 * loopback host, for a provider on the same machine); the redirect URL, when set, must be an
 * absolute http(s) URL.
 *
 * @since 0.1.0
 * @category config
 */
export const oidc: Config.Config<Option.Option<OidcOptions>> = Config.option(Config.string("TRACEBRIDGE_OIDC_ISSUER"))
  .pipe(
    Config.mapOrFail((issuer) => {
      if (Option.isNone(issuer) || issuer.value.trim() === "") return Either.right(Option.none<URL>())
      try {
        const url = new URL(issuer.value.trim())
        if (url.protocol === "https:" || (url.protocol === "http:" && loopback.has(url.hostname))) {
          return Either.right(Option.some(url))
        }
      } catch {
        // below
      }
      return Either.left(
        ConfigError.InvalidData(
          ["TRACEBRIDGE_OIDC_ISSUER"],
          "must be the provider's https:// issuer URL (http:// only on 127.0.0.1, localhost or [::1])"
        )
      )
    }),
    Config.zip(Config.option(Config.string("TRACEBRIDGE_OIDC_CLIENT_ID"))),
    Config.zip(Config.option(Config.redacted("TRACEBRIDGE_OIDC_CLIENT_SECRET"))),
    Config.zip(Config.option(Config.string("TRACEBRIDGE_OIDC_REDIRECT_URL"))),
    Config.mapOrFail(([[[issuer, clientId], clientSecret], redirectUrl]) => {
      if (Option.isNone(issuer)) return Either.right(Option.none())
      if (Option.isNone(clientId) || clientId.value.trim() === "" || Option.isNone(clientSecret)) {
        return Either.left(
          ConfigError.MissingData(
            ["TRACEBRIDGE_OIDC_CLIENT_ID"],
            "TRACEBRIDGE_OIDC_ISSUER is set: TRACEBRIDGE_OIDC_CLIENT_ID and TRACEBRIDGE_OIDC_CLIENT_SECRET are required too"
          )
        )
      }
      if (Option.isSome(redirectUrl)) {
        try {
          const url = new URL(redirectUrl.value.trim())
          if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("not http(s)")
        } catch {
          return Either.left(
            ConfigError.InvalidData(["TRACEBRIDGE_OIDC_REDIRECT_URL"], "must be an absolute http:// or https:// URL")
          )
        }
      }
      return Either.right(Option.some({
        issuer: issuer.value,
        clientId: clientId.value.trim(),
        clientSecret: clientSecret.value,
        redirectUrl: Option.map(redirectUrl, (u) => u.trim())
      }))
    })
  )
