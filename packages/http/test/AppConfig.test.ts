/**
 * Configuration read from the environment: the sandbox world size, the upstream deadline, the
 * server's timeouts and the dashboard's single sign-on.
 */
import { assert, describe, it } from "@effect/vitest"
import { ProviderAConfig } from "@tracebridge/adapter-provider-a"
import { ConfigProvider, Duration, Effect, Either, Option, Redacted } from "effect"
import type { Config } from "effect"
import * as AppConfig from "../src/AppConfig.js"
import * as Database from "../src/persistence/Database.js"
import * as RateLimit from "../src/RateLimit.js"
import * as Readiness from "../src/Readiness.js"
import * as RequestLog from "../src/RequestLog.js"
import * as RequestLogCapture from "../src/RequestLogCapture.js"
import * as Events from "../src/services/Events.js"
import * as ManagedSync from "../src/services/ManagedSync.js"
import * as Tracing from "../src/Tracing.js"
import * as WebhookConfig from "../src/WebhookConfig.js"

const sizeOf = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(
      Effect.withConfigProvider(AppConfig.sandboxSize, ConfigProvider.fromMap(new Map(Object.entries(env))))
    )
  )

/** The message of the error a config fails with under `env`. */
const failureOf = (config: Config.Config<unknown> | Effect.Effect<unknown, unknown>, env: Record<string, string>) => {
  const effect = Effect.isEffect(config) ? config : (config as Effect.Effect<unknown, unknown>)
  const result = Effect.runSync(
    Effect.either(Effect.withConfigProvider(effect, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )
  assert.isTrue(Either.isLeft(result), `accepted ${JSON.stringify(env)}`)
  return String(Either.isLeft(result) ? result.left : "")
}

describe("AppConfig", () => {
  // A value out of range once failed as "Invalid data at : must be …", naming no variable: the
  // check ran after the default, where the variable's name is lost.
  it("a value out of range fails naming its variable, for every checked setting", () => {
    const cases: ReadonlyArray<readonly [Config.Config<unknown> | Effect.Effect<unknown, unknown>, string, string]> = [
      [AppConfig.sandboxSize, "TRACEBRIDGE_SANDBOX_SIZE", "default"],
      [AppConfig.sandboxCacheEntries, "TRACEBRIDGE_SANDBOX_CACHE_ENTRIES", "-1"],
      [AppConfig.upstreamDeadline, "TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS", "301"],
      [AppConfig.server, "TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS", "-1"],
      [AppConfig.server, "TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS", "0"],
      [WebhookConfig.worker, "TRACEBRIDGE_SHUTDOWN_GRACE_SECONDS", "-1"],
      [RateLimit.config, "TRACEBRIDGE_RATE_LIMIT_BURST", "0"],
      [RateLimit.config, "TRACEBRIDGE_RATE_LIMIT_RATE", "0"],
      [Readiness.drainDelay, "TRACEBRIDGE_DRAIN_SECONDS", "-1"],
      [RequestLog.every, "TRACEBRIDGE_ACCESS_LOG_EVERY", "-1"],
      [RequestLogCapture.config, "TRACEBRIDGE_REQUEST_LOG_DAYS", "0"],
      [RequestLogCapture.config, "TRACEBRIDGE_REQUEST_LOG_QUEUE_SIZE", "0"],
      [Database.waits, "TRACEBRIDGE_DATABASE_WAIT_MS", "1"],
      [Database.waits, "TRACEBRIDGE_SQLITE_BUSY_TIMEOUT_MS", "5000"],
      [Events.heartbeat, "TRACEBRIDGE_EVENT_STREAM_HEARTBEAT_SECONDS", "0"],
      [Events.retentionDays, "TRACEBRIDGE_EVENT_RETENTION_DAYS", "0"],
      [ManagedSync.settings, "TRACEBRIDGE_SYNC_HORIZON_DAYS", "0"],
      [ManagedSync.settings, "TRACEBRIDGE_SYNC_POLL_INTERVAL_SECONDS", "5"],
      [ManagedSync.settings, "TRACEBRIDGE_SYNC_TAKEOVER_SECONDS", "0"],
      [ProviderAConfig.fromEnvironment, "PROVIDER_A_HISTORY_DAYS", "0"]
    ]
    for (const [config, name, bad] of cases) {
      const env: Record<string, string> = { [name]: bad }
      if (name.startsWith("PROVIDER_A_")) env["PROVIDER_A_VENDOR_KEY"] = "vendor-key-for-tests"
      assert.include(failureOf(config, env), name, `${name}=${bad}`)
    }
    const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_TRACES_SAMPLER_ARG: "2" }
    assert.include(failureOf(Tracing.settings, traced), "OTEL_TRACES_SAMPLER_ARG")
  })

  it("TRACEBRIDGE_SANDBOX_SIZE: small by default, small, large or a number of packages per facility", () => {
    assert.deepStrictEqual(sizeOf({}), Either.right("small"))
    assert.deepStrictEqual(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: "small" }), Either.right("small"))
    assert.deepStrictEqual(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: "large" }), Either.right("large"))
    assert.deepStrictEqual(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: "100000" }), Either.right({ packages: 100_000 }))
    for (const bad of ["0", "-5", "1.5", "huge", ""]) {
      assert.isTrue(Either.isLeft(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: bad })), bad)
    }
  })

  it("TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS: 30 by default, more than 0 and at most 300 seconds", () => {
    const deadlineOf = (env: Record<string, string>) =>
      Effect.runSync(
        Effect.either(
          Effect.withConfigProvider(AppConfig.upstreamDeadline, ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      )
    assert.deepStrictEqual(deadlineOf({}), Either.right(Duration.seconds(30)))
    assert.deepStrictEqual(
      deadlineOf({ TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS: "5" }),
      Either.right(Duration.seconds(5))
    )
    assert.deepStrictEqual(
      deadlineOf({ TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS: "2.5" }),
      Either.right(Duration.millis(2500))
    )
    for (const bad of ["0", "-5", "soon", "", "301"]) {
      assert.isTrue(Either.isLeft(deadlineOf({ TRACEBRIDGE_UPSTREAM_DEADLINE_SECONDS: bad })), bad)
    }
  })

  it("TRACEBRIDGE_*_TIMEOUT_SECONDS: sound defaults, overrides, and refusals", () => {
    const timeoutsOf = (env: Record<string, string>) =>
      Effect.runSync(
        Effect.either(
          Effect.withConfigProvider(AppConfig.serverTimeouts, ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      ).pipe(Either.map((t) => Object.fromEntries(Object.entries(t).map(([k, d]) => [k, Duration.toSeconds(d)]))))
    assert.deepStrictEqual(timeoutsOf({}), Either.right({ headers: 10, request: 60, keepAlive: 65, socketIdle: 120 }))
    assert.deepStrictEqual(
      timeoutsOf({
        TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS: "1.5",
        TRACEBRIDGE_REQUEST_TIMEOUT_SECONDS: "2",
        TRACEBRIDGE_KEEP_ALIVE_TIMEOUT_SECONDS: "75",
        TRACEBRIDGE_SOCKET_IDLE_TIMEOUT_SECONDS: "0"
      }),
      Either.right({ headers: 1.5, request: 2, keepAlive: 75, socketIdle: 0 })
    )
    for (
      const bad of [
        { TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS: "0" },
        { TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS: "-1" },
        { TRACEBRIDGE_HEADERS_TIMEOUT_SECONDS: "soon" },
        { TRACEBRIDGE_REQUEST_TIMEOUT_SECONDS: "5" },
        { TRACEBRIDGE_KEEP_ALIVE_TIMEOUT_SECONDS: "0" },
        { TRACEBRIDGE_SOCKET_IDLE_TIMEOUT_SECONDS: "-1" }
      ]
    ) {
      assert.isTrue(Either.isLeft(timeoutsOf(bad)), JSON.stringify(bad))
    }
  })

  it("TRACEBRIDGE_OIDC_*: off without an issuer; with one, the client's id and secret are required; https or loopback http", () => {
    const oidcOf = (env: Record<string, string>) =>
      Effect.runSync(
        Effect.either(Effect.withConfigProvider(AppConfig.oidc, ConfigProvider.fromMap(new Map(Object.entries(env)))))
      )
    const secret = "the-client-secret-4e1f"
    const client = { TRACEBRIDGE_OIDC_CLIENT_ID: "dash", TRACEBRIDGE_OIDC_CLIENT_SECRET: secret }
    assert.deepStrictEqual(oidcOf({}), Either.right(Option.none()))
    assert.deepStrictEqual(oidcOf(client), Either.right(Option.none()))
    const on = oidcOf({ ...client, TRACEBRIDGE_OIDC_ISSUER: "https://login.example.com/tenant/v2.0" })
    assert.isTrue(Either.isRight(on) && Option.isSome(on.right))
    if (Either.isRight(on) && Option.isSome(on.right)) {
      assert.strictEqual(on.right.value.issuer.href, "https://login.example.com/tenant/v2.0")
      assert.strictEqual(on.right.value.clientId, "dash")
      assert.strictEqual(Redacted.value(on.right.value.clientSecret), secret)
      // redacted whenever printed
      assert.notInclude(String(on.right.value.clientSecret), secret)
      assert.notInclude(JSON.stringify(on.right.value), secret)
      assert.isTrue(Option.isNone(on.right.value.redirectUrl))
    }
    assert.isTrue(Either.isRight(oidcOf({ ...client, TRACEBRIDGE_OIDC_ISSUER: "http://127.0.0.1:8080" })))
    assert.isTrue(
      Either.isRight(
        oidcOf({
          ...client,
          TRACEBRIDGE_OIDC_ISSUER: "https://idp.example",
          TRACEBRIDGE_OIDC_REDIRECT_URL: "https://dash.example/dashboard/sso/callback"
        })
      )
    )
    for (
      const bad of [
        { ...client, TRACEBRIDGE_OIDC_ISSUER: "http://idp.example" },
        { ...client, TRACEBRIDGE_OIDC_ISSUER: "not a url" },
        { TRACEBRIDGE_OIDC_ISSUER: "https://idp.example", TRACEBRIDGE_OIDC_CLIENT_ID: "dash" },
        { TRACEBRIDGE_OIDC_ISSUER: "https://idp.example", TRACEBRIDGE_OIDC_CLIENT_SECRET: secret },
        { ...client, TRACEBRIDGE_OIDC_ISSUER: "https://idp.example", TRACEBRIDGE_OIDC_REDIRECT_URL: "/callback" }
      ]
    ) {
      const refused = oidcOf(bad)
      assert.isTrue(Either.isLeft(refused), JSON.stringify(bad))
      if (Either.isLeft(refused)) assert.notInclude(String(refused.left), secret)
    }
  })
})
