import { assert, describe, it } from "@effect/vitest"
import { Ids, ProviderContract, ProviderError, ProviderPort, Session } from "@tracebridge/core"
import { Effect, Layer } from "effect"
import * as Memory from "./support/MemoryDriver.js"

const fixtureFor = (state: "CO" | "MA", failures: Array<ProviderError.ProviderError>): ProviderContract.Fixture => ({
  session: Session.make({
    key: `contract-${state}`,
    provider: "provider_a",
    state,
    environment: "sandbox",
    credentials: { user_key: Memory.GOOD_KEY }
  }),
  invalidCredentials: { user_key: "wrong-key" },
  facilityId: Ids.make("facility", "provider_a", Memory.LICENSE),
  failures: [
    {
      name: "a 503 becomes ProviderUnavailable",
      arrange: Effect.sync(() => {
        failures.push(
          new ProviderError.ProviderUnavailable({ provider: "provider_a", operation: "x", message: "down" })
        )
      }),
      expected: "ProviderUnavailable"
    },
    {
      name: "a 429 becomes ProviderRateLimited",
      arrange: Effect.sync(() => {
        failures.push(
          new ProviderError.ProviderRateLimited({ provider: "provider_a", operation: "x", message: "slow down" })
        )
      }),
      expected: "ProviderRateLimited",
      call: (port, fx) => port.get("plants", fx.session, fx.facilityId, Ids.make("plant", "provider_a", "PL0"))
    }
  ]
})

const layerFor = (state: "CO" | "MA", options: Memory.Options = {}, portOptions: ProviderPort.Options = {}) => {
  const failures: Array<ProviderError.ProviderError> = []
  return Layer.mergeAll(
    Layer.succeed(ProviderPort.ProviderPort, ProviderPort.make(Memory.make({ ...options, failures }), portOptions)),
    Layer.succeed(ProviderContract.ContractFixture, fixtureFor(state, failures))
  )
}

for (const state of ["CO", "MA"] as const) {
  describe.sequential(`ProviderContract against the memory driver in ${state}`, () => {
    const layer = layerFor(state)
    for (const check of ProviderContract.checksFor(Memory.descriptor, state)) {
      it.effect(check.name, () => Effect.provide(check.run, layer))
    }
  })
}

const runCheck = (name: string, layer: Layer.Layer<ProviderPort.ProviderPort | ProviderContract.ContractFixture>) => {
  const check = ProviderContract.checksFor(Memory.descriptor, "CO").find((c) => c.name === name)
  if (check === undefined) throw new Error(`no check named ${name}`)
  return Effect.flip(Effect.provide(check.run, layer))
}

describe("ProviderContract", () => {
  it("generates checks from the descriptor: gated resources, declared writes, failures", () => {
    const names = ProviderContract.checksFor(Memory.descriptor, "CO").map((c) => c.name)
    assert.include(names, "sales_deliveries: not offered in CO, answers CapabilityNotEnabled")
    assert.include(names, "packages: lists paginate consistently")
    assert.include(names, "writes: split_package beyond the source is InsufficientQuantity and changes nothing")
    assert.include(names, "failures: provider failures map into the error family")
    assert.notInclude(names, "sales_deliveries: lists paginate consistently")
    const readOnly = ProviderContract.checksFor({ ...Memory.descriptor, writes: [] }, "MA").map((c) => c.name)
    assert.include(readOnly, "writes: create_transfer is not offered, answers CapabilityNotEnabled")
    assert.include(readOnly, "sales_deliveries: lists paginate consistently")
    assert.throws(() => ProviderContract.checksFor(Memory.descriptor, "TX"))
  })

  it.effect("catches a driver whose totals lie", () =>
    Effect.gen(function*() {
      const error = yield* runCheck("items: lists paginate consistently", layerFor("CO", { tamperTotal: (t) => t + 1 }))
      assert.strictEqual(error._tag, "ContractViolation")
    }))

  it.effect("catches a list that disagrees with the get", () =>
    Effect.gen(function*() {
      const tamper = (_: unknown, item: any) => ({ ...item, name: `${item.name} (listed)` })
      const error = yield* runCheck("strains: a get returns the same object as the list", layerFor("CO", { tamper }))
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "name")
    }))

  it.effect("catches extra fields even when the port does not validate", () =>
    Effect.gen(function*() {
      const tamper = (_: unknown, item: any) => ({ ...item, LastModified: "2026-01-01" })
      const error = yield* runCheck(
        "locations: objects carry exactly the spec's fields",
        layerFor("CO", { tamper }, { validateOutput: false })
      )
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "extra [LastModified]")
    }))

  it.effect("catches a filter the driver ignores", () =>
    Effect.gen(function*() {
      const driver = Memory.make()
      const ignoring = {
        ...driver,
        resources: {
          ...driver.resources,
          plants: {
            ...driver.resources.plants!,
            list: (s: any, f: any, _q: any, w: any) => driver.resources.plants!.list(s, f, {}, w)
          }
        }
      }
      const layer = Layer.mergeAll(
        Layer.succeed(ProviderPort.ProviderPort, ProviderPort.make(ignoring)),
        Layer.succeed(ProviderContract.ContractFixture, fixtureFor("CO", []))
      )
      const error = yield* runCheck("plants: filters narrow the list", layer)
      assert.strictEqual(error._tag, "ContractViolation")
    }))

  it.effect("catches a failure that does not map to the expected error", () =>
    Effect.gen(function*() {
      const layer = Layer.mergeAll(
        Layer.succeed(ProviderPort.ProviderPort, ProviderPort.make(Memory.make())),
        Layer.succeed(ProviderContract.ContractFixture, {
          ...fixtureFor("CO", []),
          failures: [{ name: "nothing happens", arrange: Effect.void, expected: "ProviderTimeout" as const }]
        })
      )
      const error = yield* runCheck("failures: provider failures map into the error family", layer)
      assert.strictEqual(error._tag, "ContractViolation")
      assert.include(error.message, "expected ProviderTimeout, but the call succeeded")
    }))
})
