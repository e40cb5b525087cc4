import { NodeHttpServer } from "@effect/platform-node"
import { Http } from "@tracebridge/http"
import type { Layer } from "effect"
import { Layer as L } from "effect"
import * as Crypto from "../../src/services/Crypto.js"
import * as TestDatabase from "./TestDatabase.js"

/** The service on a test server on SQLite in a temporary file, with the worker off: tests drive deliveries. */
export const webhookApp = (options: Http.Options = {}) =>
  Http.makeHttpLive({ worker: false, ...options }).pipe(
    L.provideMerge(NodeHttpServer.layerTest),
    L.provideMerge(Crypto.layerTest),
    L.provideMerge(TestDatabase.layer)
  )

export type WebhookApp = ReturnType<typeof webhookApp> extends Layer.Layer<infer A, any, any> ? A : never
