/**
 * How much of the provider ports' output the API validates (ADR 0031): a production connection's
 * list pages are checked on a sample (the first item of each window; a facility list, a get and a
 * chain of custody whole), a sandbox connection's answers whole, and
 * `TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK=all` checks production's whole too. Whatever is checked, a
 * mapper's bad object reaches the integrator as 502 `provider_invalid_response`, never as a 500 or
 * a 400, and never with the schema's words.
 *
 * The bad object is real: a package whose `PackagedDate` is `2026-02-30` passes provider_a's wire
 * schema (a Metrc date is checked by its shape) and maps to a `packaged_date` that core's `IsoDate`
 * refuses (no such day).
 */
import { assert, describe, it } from "@effect/vitest"
import type { Sandbox } from "@tracebridge/sandbox"
import type { Standalone } from "@tracebridge/sandbox"
import { Cause, Effect, Exit, Layer } from "effect"
import { Providers } from "../src/services/Providers.js"
import { againstStandalone, appAgainst, appWith } from "./support/StandaloneUpstream.js"
import type { Json } from "./support/TestApp.js"
import { call, linkProduction, linkSandbox, productionSignIn, signIn } from "./support/TestApp.js"

const NO_SUCH_DAY = "2026-02-30"

/** The package of a world's facility with this id, by its id. */
const packageIn = (world: ReturnType<Sandbox.Sandbox["world"]>, facilityId: string, packageId: string) => {
  const found = world.facilities.find((d) => d.facility.id === facilityId)?.packages.find((p) => p.id === packageId)
  assert.isDefined(found, `package ${packageId} in the world`)
  return found as { packaged_date: string | null }
}

/** The answer is the provider's bad answer, as the integrator must see it. */
const isInvalidResponse = (answer: Json, what: string) => {
  assert.strictEqual(answer.status, 502, `${what}: ${JSON.stringify(answer.body)}`)
  assert.strictEqual(answer.body.error.code, "provider_invalid_response", what)
  assert.notInclude(answer.body.error.message, NO_SUCH_DAY, what)
  assert.notMatch(answer.body.error.message, /expected|IsoDate|packaged_date|Schema/i, what)
}

/** A production connection of the standalone sandbox's good login, and its cultivator's packages path. */
const linkCultivator = (running: Standalone.Running) =>
  Effect.gen(function*() {
    const { access } = yield* productionSignIn
    const { connectionId } = yield* linkProduction(access)
    const world = running.sandbox.world("provider_a", "CO", "user_good")
    const cultivator = world.facilities.find((d) => d.role === "cultivation")!.facility.id
    const path = `/v1/connections/${connectionId}/facilities/${cultivator}/packages?per_page=5`
    return { access, world, cultivator, path }
  })

describe("output checks (ADR 0031)", () => {
  it.live(
    "production samples each page: a bad item past the first is served as mapped, a bad first item is 502",
    () =>
      againstStandalone((running) => appAgainst(running), (running) =>
        Effect.gen(function*() {
          const { access, cultivator, path, world } = yield* linkCultivator(running)
          const before = yield* call("GET", path, { token: access })
          assert.strictEqual(before.status, 200, JSON.stringify(before.body))
          const [firstId, secondId] = (before.body.data as Array<{ id: string }>).map((p) => p.id)
          packageIn(world, cultivator, secondId!).packaged_date = NO_SUCH_DAY
          const sampled = yield* call("GET", path, { token: access })
          assert.strictEqual(sampled.status, 200, JSON.stringify(sampled.body))
          assert.strictEqual(sampled.body.data[1].id, secondId)
          assert.strictEqual(sampled.body.data[1].packaged_date, NO_SUCH_DAY)
          // a get answers one object, checked whole
          const got = yield* call("GET", `${path.split("?")[0]}/${secondId}`, { token: access })
          isInvalidResponse(got, "the get of the bad package")
          packageIn(world, cultivator, firstId!).packaged_date = NO_SUCH_DAY
          isInvalidResponse(yield* call("GET", path, { token: access }), "a page whose first item is bad")
        })),
    60_000
  )

  it.live(
    "TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK=all checks every item of production's pages",
    () =>
      againstStandalone(
        (running) => appAgainst(running, { TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK: "all" }),
        (running) =>
          Effect.gen(function*() {
            const { access, cultivator, path, world } = yield* linkCultivator(running)
            const before = yield* call("GET", path, { token: access })
            assert.strictEqual(before.status, 200, JSON.stringify(before.body))
            packageIn(world, cultivator, before.body.data[1].id).packaged_date = NO_SUCH_DAY
            isInvalidResponse(yield* call("GET", path, { token: access }), "a page whose second item is bad")
          })
      ),
    60_000
  )

  it.effect("a sandbox connection's pages are checked whole", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const { connection_id } = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${connection_id}/facilities`, { token: me.access })
      const { sandbox } = yield* Providers
      const key = sandbox.keys().find((k) => k.includes(connection_id))!
      const [provider, state, ...login] = key.split("|")
      const world = sandbox.world(provider as never, state as never, login.join("|"))
      const facility = facilities.body.data.find((f: { id: string }) =>
        (world.facilities.find((d) => d.facility.id === f.id)?.packages.length ?? 0) > 2
      ).id as string
      const base = `/v1/connections/${connection_id}/facilities/${facility}/packages`
      // the order of the list (read with another page size: the read cache keeps each page apart)
      const before = yield* call("GET", `${base}?per_page=100`, { token: me.access })
      assert.strictEqual(before.status, 200, JSON.stringify(before.body))
      packageIn(world, facility, before.body.data[1].id).packaged_date = NO_SUCH_DAY
      isInvalidResponse(yield* call("GET", `${base}?per_page=5`, { token: me.access }), "a sandbox page")
    }).pipe(Effect.provide(appWith({}))))

  it.effect("another value of TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK stops the start-up, naming it", () =>
    Effect.gen(function*() {
      const started = yield* Effect.exit(Layer.build(appWith({ TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK: "none" })))
      assert.isTrue(Exit.isFailure(started))
      if (Exit.isFailure(started)) {
        assert.include(Cause.pretty(started.cause), "TRACEBRIDGE_PRODUCTION_OUTPUT_CHECK")
        assert.include(Cause.pretty(started.cause), "must be sample or all")
      }
    }).pipe(Effect.scoped))
})
