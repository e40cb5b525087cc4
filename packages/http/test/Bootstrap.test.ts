/**
 * The first-start banner `npm start` prints: it shows a client secret it generated, once, and never
 * a secret that came from `TRACEBRIDGE_CLIENT_SECRET` (the end-to-end check on the built server is
 * in Main.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Bootstrap } from "@tracebridge/http"
import { ConfigProvider, Effect, Option } from "effect"
import { Accounts } from "../src/persistence/Accounts.js"
import * as Crypto from "../src/services/Crypto.js"
import * as TestDatabase from "./support/TestDatabase.js"

const withEnv = (env: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env))))

/** Whether the stored client `id` accepts `secret`. */
const accepts = (id: string, secret: string) =>
  Effect.map(
    Effect.flatMap(Accounts, (accounts) => accounts.getClient(id)),
    (client) => Option.isSome(client) && Crypto.matches(secret, client.value.secret_hash)
  )

describe("Bootstrap", () => {
  it.effect("prints a generated secret, once", () =>
    Effect.gen(function*() {
      const created = Option.getOrThrow(yield* Bootstrap.firstStart.pipe(withEnv({})))
      assert.strictEqual(created.secretSource, "generated")
      const banner = Bootstrap.banner(created)
      assert.include(banner, `TRACEBRIDGE_CLIENT_ID=${created.client_id}`)
      assert.include(banner, `TRACEBRIDGE_CLIENT_SECRET=${created.client_secret}`)
      assert.match(created.client_secret, /^tb_secret_/)
      assert.isTrue(yield* accepts(created.client_id, created.client_secret))
      assert.isTrue(Option.isNone(yield* Bootstrap.firstStart.pipe(withEnv({}))))
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("never prints a secret from TRACEBRIDGE_CLIENT_SECRET", () =>
    Effect.gen(function*() {
      const secret = "operator-chosen-secret-9c41d2"
      const created = Option.getOrThrow(
        yield* Bootstrap.firstStart.pipe(
          withEnv({ TRACEBRIDGE_CLIENT_ID: "tb_client_fixed", TRACEBRIDGE_CLIENT_SECRET: secret })
        )
      )
      assert.strictEqual(created.secretSource, "environment")
      const banner = Bootstrap.banner(created)
      assert.notInclude(banner, secret)
      assert.notInclude(banner, secret.slice(0, 12))
      assert.include(banner, "TRACEBRIDGE_CLIENT_ID=tb_client_fixed")
      assert.include(banner, "the secret from TRACEBRIDGE_CLIENT_SECRET")
      assert.isTrue(yield* accepts("tb_client_fixed", secret))
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("uses TRACEBRIDGE_CLIENT_SECRET without TRACEBRIDGE_CLIENT_ID too, and does not print it", () =>
    Effect.gen(function*() {
      const secret = "tb_secret_from_the_environment_only"
      const created = Option.getOrThrow(
        yield* Bootstrap.firstStart.pipe(withEnv({ TRACEBRIDGE_CLIENT_SECRET: secret }))
      )
      assert.strictEqual(created.secretSource, "environment")
      assert.match(created.client_id, /^tb_client_/)
      const banner = Bootstrap.banner(created)
      assert.include(banner, `TRACEBRIDGE_CLIENT_ID=${created.client_id}`)
      assert.notInclude(banner, secret)
      assert.notInclude(banner, "from_the_environment")
      assert.isTrue(yield* accepts(created.client_id, secret))
    }).pipe(Effect.provide(TestDatabase.layer)))

  it.effect("ensureSandboxClient still returns the credentials alone", () =>
    Effect.gen(function*() {
      const created = Option.getOrThrow(yield* Bootstrap.ensureSandboxClient.pipe(withEnv({})))
      assert.deepStrictEqual(Object.keys(created).sort(), ["client_id", "client_secret"])
    }).pipe(Effect.provide(TestDatabase.layer)))
})
