/**
 * A server running on the development encryption key (no `TRACEBRIDGE_ENCRYPTION_KEY`) links
 * sandbox logins but refuses to store a production one, and creates nothing when it refuses.
 */
import { NodeHttpServer } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Http } from "@tracebridge/http"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import * as Crypto from "../src/services/Crypto.js"
import { call, linkSandbox, productionSignIn, signIn, submitLogin } from "./support/TestApp.js"
import * as TestDatabase from "./support/TestDatabase.js"

const DevKeyApp = Http.HttpLive.pipe(
  Layer.provideMerge(NodeHttpServer.layerTest),
  Layer.provideMerge(Layer.sync(Crypto.Crypto, () => Crypto.make([randomBytes(32)], { configured: false }))),
  Layer.provideMerge(TestDatabase.layer)
)

describe("production logins need a configured encryption key", () => {
  it.effect("the widget refuses a production login on the development key; sandbox still links", () =>
    Effect.gen(function*() {
      const sandbox = yield* signIn
      const linked = yield* linkSandbox(sandbox.access)
      assert.strictEqual(linked.status, "active")

      const { access } = yield* productionSignIn
      const link = yield* call("POST", "/v1/link/token/create", { token: access, json: {} })
      assert.match(link.body.data.link_token, /^link-production-/)
      const submitted = yield* submitLogin(access, {
        provider: "provider_a",
        state: "CO",
        credentials: { user_key: "production-user-key" }
      })
      assert.strictEqual(submitted.status, 500, JSON.stringify(submitted.body))
      assert.strictEqual(submitted.body.error.code, "internal_error")
      assert.include(submitted.body.error.message, "TRACEBRIDGE_ENCRYPTION_KEY")
      assert.notInclude(JSON.stringify(submitted.body), "production-user-key")
      const connections = yield* call("GET", "/v1/connections", { token: access })
      assert.deepStrictEqual(connections.body.data, [])
    }).pipe(Effect.provide(DevKeyApp)))
})
