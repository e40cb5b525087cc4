/**
 * Where the dashboard's Postgres tests start (issue #33): the API without its background worker
 * (a test runs the worker's steps itself), on a test server, on a fresh schema of
 * `TEST_DATABASE_URL` that is dropped when the test's scope closes. The first start's owner, and
 * an API key with its access token, are `firstStartOwner` and `ownerWithKeyAs` of `Dashboard.ts`.
 */
import { Http } from "@tracebridge/http"
import { ConfigProvider, Effect, Layer, Redacted } from "effect"
import * as Database from "../../src/persistence/Database.js"
import * as Server from "../../src/Server.js"
import * as Crypto from "../../src/services/Crypto.js"
import { freshSchema } from "./PgSchema.js"

/** Settings read before the environment (`TRACEBRIDGE_OIDC_ISSUER`, …). */
export type Settings = Readonly<Record<string, string>>

/** The API on the Postgres database at `schemaUrl`, reading `settings` before the environment. */
const appOn = (schemaUrl: string, settings: Settings) => {
  const app = Http.makeHttpLive({ worker: false }).pipe(
    Layer.provideMerge(Server.layerTest),
    Layer.provideMerge(Crypto.layerTest),
    Layer.provideMerge(Layer.orDie(Database.layerPg(Redacted.make(schemaUrl))))
  )
  return Object.keys(settings).length === 0 ? app : app.pipe(
    Layer.provide(Layer.setConfigProvider(
      ConfigProvider.fromMap(new Map(Object.entries(settings))).pipe(
        ConfigProvider.orElse(() => ConfigProvider.fromEnv())
      )
    ))
  )
}

/**
 * A fresh schema `{prefix}_…` of `url` (dropped with the scope), its URL (`schemaUrl`, for a
 * test that reads the tables itself) and the API on it (`app`, to provide).
 */
export const freshApp = (url: string, prefix: string, settings: Settings = {}) =>
  Effect.map(freshSchema(url, prefix), (schemaUrl) => ({ schemaUrl, app: appOn(schemaUrl, settings) }))

/** Runs a test against the API on a fresh schema `{prefix}_…` of `url` (see `freshApp`). */
export const onFreshApp = (url: string, prefix: string, settings: Settings = {}) =>
<A, E, R>(
  test: Effect.Effect<A, E, R>
) => Effect.flatMap(freshApp(url, prefix, settings), ({ app }) => Effect.provide(test, app))
