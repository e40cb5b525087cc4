/**
 * `GET /v1/providers`: the installed providers from the registration list, with their states
 * (licence types, capabilities, environments) and login fields; any access token, no other.
 */
import { assert, describe, it } from "@effect/vitest"
import { Catalog } from "@tracebridge/providers"
import { Effect, TestClock } from "effect"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

describe("GET /v1/providers", () => {
  it.effect("lists every installed provider with its states and login fields, in registration order", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const answer = yield* call("GET", "/v1/providers", { token: me.access })
      assert.strictEqual(answer.status, 200, JSON.stringify(answer.body))
      assert.isString(answer.body.meta.request_id)
      const providers = answer.body.data as Array<any>
      assert.deepStrictEqual(providers.map((p) => p.name), [...Catalog.installed.names])
      for (const provider of providers) {
        const descriptor = Catalog.get(provider.name).descriptor
        assert.strictEqual(provider.display_name, descriptor.displayName)
        assert.deepStrictEqual(
          provider.login_fields,
          descriptor.credentialFields.map((f) => ({ name: f.name, label: f.label, secret: f.secret }))
        )
        assert.deepStrictEqual(provider.states.map((s: any) => s.state), Object.keys(descriptor.capabilities).sort())
        assert.deepStrictEqual(
          provider.writes,
          descriptor.writes.map((name) => ({ name, facility_capability: descriptor.writeNeeds?.[name] ?? null }))
        )
        for (const state of provider.states) {
          assert.deepStrictEqual(state.capabilities, descriptor.capabilities[state.state as "CO"])
          assert.include(state.environments, "sandbox")
          assert.isAbove(state.license_types.length, 0)
        }
      }
      // what a state says it can do is what a connection there has
      const linked = yield* linkSandbox(me.access)
      const connection = yield* call("GET", `/v1/connections/${linked.connection_id}`, { token: me.access })
      const co = providers.find((p) => p.name === connection.body.data.provider).states.find((s: any) =>
        s.state === connection.body.data.state
      )
      assert.deepStrictEqual(co.capabilities, connection.body.data.capabilities)
    }).pipe(Effect.provide(TestApp)))

  it.effect("needs a bearer token; a connection token may read it too", () =>
    Effect.gen(function*() {
      const anonymous = yield* call("GET", "/v1/providers")
      assert.strictEqual(anonymous.status, 401)
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const viaConnection = yield* call("GET", "/v1/providers", { token: linked.connection_token! })
      assert.strictEqual(viaConnection.status, 200)
    }).pipe(Effect.provide(TestApp)))

  it.effect(
    "every installed provider works in the sandbox over /v1: public token, exchange, facilities, packages",
    () =>
      Effect.gen(function*() {
        // a present-day clock before the service starts: the sandbox's worlds are dated from it
        yield* TestClock.setTime(Date.parse("2026-03-15T12:00:00.000Z"))
        yield* Effect.provide(everyProvider, TestApp)
      }),
    60_000
  )
})

const everyProvider = Effect.gen(function*() {
  const me = yield* signIn
  for (const name of Catalog.installed.names) {
    const descriptor = Catalog.get(name).descriptor
    const state = Object.keys(descriptor.capabilities).includes("CO") ? "CO" : "HI"
    const linked = yield* linkSandbox(me.access, name as "provider_a", state)
    assert.isString(linked.connection_id, name)
    const facilities = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, { token: me.access })
    assert.strictEqual(facilities.status, 200, `${name}: ${JSON.stringify(facilities.body)}`)
    assert.isAbove(facilities.body.data.length, 0, name)
    const facility = facilities.body.data[0].id as string
    const path = `/v1/connections/${linked.connection_id}/facilities/${facility}/packages`
    const packages = yield* call("GET", `${path}?per_page=2`, { token: me.access })
    assert.strictEqual(packages.status, 200, `${name}: ${JSON.stringify(packages.body)}`)
    assert.isAbove(packages.body.pagination.total, 0, name)
    const one = yield* call("GET", `${path}/${packages.body.data[0].id}`, { token: me.access })
    assert.strictEqual(one.status, 200, name)
    assert.deepStrictEqual(one.body.data, packages.body.data[0], name)
    assert.strictEqual(one.body.data.provider, name)
  }
})
