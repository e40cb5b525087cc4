/**
 * The facility-level lists of `ResourcesApi` on sandbox connections of both providers (issue #29):
 * every filter the OpenAPI document gives a list agrees with its field. With packages on every
 * kind of hold (administrative, investigation, recall), `?is_on_hold=true` and `=false` list
 * exactly the items of the full list whose `is_on_hold` reads so; and the same for every other
 * filter, at every facility, each filtered list paged with totals that count what it delivers.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { agree, exempt } from "./support/FilterAgreement.js"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const KINDS = ["administrative", "investigation", "recall"] as const

/** Puts one package of the facility that holds the most on each kind of hold; answers their ids. */
export const holdEveryKind = (token: string, connectionId: string) =>
  Effect.gen(function*() {
    const facilities = (yield* call("GET", `/v1/connections/${connectionId}/facilities?per_page=100`, { token })).body
      .data as Array<any>
    let best: { facility: any; free: Array<any> } | undefined
    for (const facility of facilities) {
      const free = (yield* call(
        "GET",
        `/v1/connections/${connectionId}/facilities/${facility.id}/packages?is_on_hold=false&per_page=100`,
        { token }
      )).body.data as Array<any>
      if (best === undefined || free.length > best.free.length) best = { facility, free }
    }
    assert.isAtLeast(best!.free.length, KINDS.length + 1, "a facility with packages to hold")
    const held = KINDS.map((kind, i) => ({ kind, id: best!.free[i]!.id as string }))
    for (const { id, kind } of held) {
      const simulated = yield* call("POST", `/v1/sandbox/${connectionId}/simulate`, {
        token,
        json: { scenario: "package_hold", params: { package_id: id, on_hold: true, kind } }
      })
      assert.strictEqual(simulated.status, 200, JSON.stringify(simulated.body))
    }
    return { facility: best!.facility, held }
  })

describe("ResourcesApi filters (sandbox)", () => {
  for (const provider of ["provider_a", "provider_b"] as const) {
    it.live(
      `every list filter agrees with its field, is_on_hold for every kind of hold (${provider})`,
      () =>
        Effect.gen(function*() {
          const me = yield* signIn
          const { connection_id } = yield* linkSandbox(me.access, provider)
          const { facility, held } = yield* holdEveryKind(me.access, connection_id)
          // an incoming transfer beside the facility's outgoing ones, so that direction keeps some
          const arrived = yield* call("POST", `/v1/sandbox/${connection_id}/simulate`, {
            token: me.access,
            json: { scenario: "transfer_arrived", params: { facility_id: facility.id } }
          })
          assert.strictEqual(arrived.status, 200, JSON.stringify(arrived.body))
          const { full } = yield* agree(me.access, connection_id, exempt[provider])
          // the held packages read as held in the full list: the filter was tried on every kind
          const packages = full.get(facility.id)!.get("packages")!
          for (const { id, kind } of held) {
            assert.isTrue(packages.find((p) => p.id === id)?.is_on_hold, `${kind} hold reads is_on_hold`)
          }
          const onHold = (yield* call(
            "GET",
            `/v1/connections/${connection_id}/facilities/${facility.id}/packages?is_on_hold=true&per_page=100`,
            { token: me.access }
          )).body.data.map((p: any) => p.id)
          assert.includeMembers(onHold, held.map((h) => h.id), "?is_on_hold=true lists every kind of hold")
        }).pipe(Effect.provide(TestApp)),
      120_000
    )
  }
})
