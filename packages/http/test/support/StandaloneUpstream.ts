/**
 * The API in process with settings of its own, and the standalone sandbox as a production
 * upstream: what tests of production connections against the strict emulators share.
 */
import { Http, Server } from "@tracebridge/http"
import { Standalone } from "@tracebridge/sandbox"
import type { Scope } from "effect"
import { ConfigProvider, Effect, Layer } from "effect"
import * as Crypto from "../../src/services/Crypto.js"
import * as TestDatabase from "./TestDatabase.js"

/** The API (no worker) on a test database, its configuration read from `settings` only. */
export const appWith = (settings: Record<string, string>) =>
  Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(TestDatabase.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings)))))
  )

/** The standalone sandbox on a free loopback port (seed 42, and `options`), closed with the scope. */
export const standaloneWith = (options: Omit<Standalone.Options, "port" | "host" | "seed"> = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => Standalone.start({ port: 0, host: "127.0.0.1", seed: "42", ...options })),
    (running) => Effect.promise(() => running.close())
  )

/** The standalone sandbox on a free loopback port (seed 42), closed with the scope. */
export const standalone = standaloneWith()

/**
 * Settings for tests whose subject is not pacing: the adapter's governor far above Metrc's limits
 * (pair it with `standaloneWith({ requestsPerSecond: 0 })`, an emulator with no limit).
 */
export const unpaced: Record<string, string> = { PROVIDER_A_FACILITY_RPS: "5000", PROVIDER_A_VENDOR_RPS: "15000" }

/** The API whose production provider_a is the emulator at `origin`, with a vendor key, and `extra`. */
export const appAt = (origin: string, extra: Record<string, string> = {}) =>
  appWith({
    TRACEBRIDGE_PROVIDER_A_BASE_URL: `${origin}/provider_a/{state}`,
    PROVIDER_A_VENDOR_KEY: "integrator-vendor-key",
    ...extra
  })

/** The API whose production provider_a is `running`'s emulator, with a vendor key, and `extra`. */
export const appAgainst = (running: Standalone.Running, extra: Record<string, string> = {}) =>
  appAt(running.origin, extra)

/** The API as `appWith` makes it. */
type App = ReturnType<typeof appWith>

/**
 * Runs `flow` in the API `app` makes against a standalone sandbox of its own (`options`), which is
 * closed after: what a test of a production connection against the strict emulator does.
 */
export const againstStandalone = <A, E>(
  app: (running: Standalone.Running) => App,
  flow: (running: Standalone.Running) => Effect.Effect<A, E, Layer.Layer.Success<App> | Scope.Scope>,
  options: Omit<Standalone.Options, "port" | "host" | "seed"> = {}
) => Effect.scoped(Effect.flatMap(standaloneWith(options), (running) => Effect.provide(flow(running), app(running))))
