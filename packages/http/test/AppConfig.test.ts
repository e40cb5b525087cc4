/**
 * Configuration read from the environment: the sandbox world size.
 */
import { assert, describe, it } from "@effect/vitest"
import * as AppConfig from "@tracebridge/http/AppConfig"
import { ConfigProvider, Effect, Either } from "effect"

const sizeOf = (env: Record<string, string>) =>
  Effect.runSync(
    Effect.either(
      Effect.withConfigProvider(AppConfig.sandboxSize, ConfigProvider.fromMap(new Map(Object.entries(env))))
    )
  )

describe("AppConfig", () => {
  it("TRACEBRIDGE_SANDBOX_SIZE: small by default, small, large or a number of packages per facility", () => {
    assert.deepStrictEqual(sizeOf({}), Either.right("small"))
    assert.deepStrictEqual(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: "small" }), Either.right("small"))
    assert.deepStrictEqual(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: "large" }), Either.right("large"))
    assert.deepStrictEqual(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: "100000" }), Either.right({ packages: 100_000 }))
    for (const bad of ["0", "-5", "1.5", "huge", ""]) {
      assert.isTrue(Either.isLeft(sizeOf({ TRACEBRIDGE_SANDBOX_SIZE: bad })), bad)
    }
  })
})
