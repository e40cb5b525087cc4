/**
 * Issue 15, item 8: misleading errors. A split of `5e-324` answered "needs a source package";
 * quantities below the unit's precision, zero, negative, non-finite or absurdly large are a 400
 * naming `quantity`. A simulate scenario with nothing left to act on says what ran out and what to do.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, signIn, TestApp } from "../support/TestApp.js"

const firstPackage = (access: string) =>
  Effect.gen(function*() {
    const linked = yield* linkSandbox(access)
    const facilities = yield* call("GET", `/v1/connections/${linked.connection_id}/facilities`, { token: access })
    const facility = facilities.body.data[0].id as string
    const path = `/v1/connections/${linked.connection_id}/facilities/${facility}/packages`
    const packages = yield* call("GET", `${path}?per_page=1&is_on_hold=false`, { token: access })
    return { linked, path, pkg: packages.body.data[0] }
  })

describe("clear errors for impossible quantities (issue 15)", () => {
  it.effect("a split's quantity below precision, zero, negative, non-finite or absurd is 400 param quantity", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const { path, pkg } = yield* firstPackage(me.access)
      const body = (quantity: string, unit = pkg.unit_of_measure as string) =>
        `{"item_name":${JSON.stringify(pkg.item_name)},"item_category":${
          JSON.stringify(pkg.item_category)
        },"quantity":${quantity},"unit_of_measure":${JSON.stringify(unit)},"source_package_ids":[${
          JSON.stringify(pkg.id)
        }]}`
      for (const quantity of ["5e-324", "1e-9", "0", "-0", "-5", "1e999", "-1e999", "1e300", "12345678901234"]) {
        const answer = yield* call("POST", path, { token: me.access, raw: body(quantity) })
        assert.strictEqual(answer.status, 400, `${quantity}: ${JSON.stringify(answer.body)}`)
        assert.strictEqual(answer.body.error.type, "validation_error", quantity)
        assert.strictEqual(answer.body.error.param, "quantity", `${quantity}: ${JSON.stringify(answer.body)}`)
        assert.notMatch(answer.body.error.message, /source package/, quantity)
      }
      const half = yield* call("POST", path, { token: me.access, raw: body("0.5", "Each") })
      assert.strictEqual(half.status, 400)
      assert.strictEqual(half.body.error.param, "quantity")
      assert.match(half.body.error.message, /whole/)
      // nothing was created by the refusals
      const after = yield* call("GET", `${path}?per_page=1&is_on_hold=false`, { token: me.access })
      assert.strictEqual(after.body.data[0].quantity, pkg.quantity)
    }).pipe(Effect.provide(TestApp)))
})

describe("simulate says what ran out (issue 15)", () => {
  it.effect("lab_result_received with no untested package left is a 422 that names what ran out and what to do", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const linked = yield* linkSandbox(me.access)
      const simulate = () =>
        call("POST", `/v1/sandbox/${linked.connection_id}/simulate`, {
          token: me.access,
          json: { scenario: "lab_result_received" }
        })
      let answer = yield* simulate()
      let runs = 0
      while (answer.status === 200 && runs < 500) {
        runs++
        answer = yield* simulate()
      }
      assert.isAbove(runs, 0)
      assert.strictEqual(answer.status, 422, JSON.stringify(answer.body))
      assert.strictEqual(answer.body.error.type, "invalid_request_error")
      assert.strictEqual(answer.body.error.code, "scenario_exhausted")
      assert.match(answer.body.error.message, /untested package/)
      assert.match(answer.body.error.message, /package_id/)
      assert.match(answer.body.error.message, /POST .*packages/)
    }).pipe(Effect.provide(TestApp)))
})
