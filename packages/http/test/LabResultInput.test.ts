/**
 * Issue #30: a sandbox lab result keeps what was sent, or is refused naming the field, with
 * nothing written. `overall_passed` that disagrees with its results, a category or unit outside
 * the provider's vocabulary, and a `lab_name` or `lab_license` that is not the lab recording the
 * result are refused (400 `invalid_parameter`, `param`) with what is allowed; an accepted result
 * reads back exactly as sent.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const providers = ["provider_a", "provider_b"] as const

describe("lab result input (issue #30)", () => {
  for (const provider of providers) {
    it.live(`refuses what would be rewritten, and keeps what it accepts (${provider})`, () =>
      Effect.gen(function*() {
        const me = yield* signIn
        const connection = yield* linkSandbox(me.access, provider)
        const root = `/v1/connections/${connection.connection_id}/facilities`
        const facilities: Array<any> = (yield* call("GET", `${root}?per_page=100`, { token: me.access })).body.data
        const grower = facilities.find((f) => f.capabilities.includes("cultivation"))
        const lab = facilities.find((f) => f.capabilities.includes("labs"))
        const base = `${root}/${grower.id}`
        const pkg = (yield* call("GET", `${base}/packages?is_on_hold=false&per_page=100`, { token: me.access })).body
          .data.find((p: any) => p.quantity >= 2)
        const count = Effect.map(
          call("GET", `${base}/lab_results?package_id=${encodeURIComponent(pkg.id)}&per_page=100`, {
            token: me.access
          }),
          (r) => r.body.pagination.total as number
        )
        const good = {
          package_id: pkg.id,
          lab_name: lab.name,
          lab_license: lab.license_number,
          overall_passed: false,
          // BioTrack dates a result when it is filed: today (another date is refused there)
          test_date: new Date().toISOString().slice(0, 10),
          results: [
            {
              name: "Pesticides",
              category: "pesticides",
              value: 0.9,
              unit: "ppm",
              passed: false,
              // BioTrack keeps no notes per test (a note is refused there)
              notes: provider === "provider_a" ? "over the action level" : null
            },
            { name: "Moisture", category: "moisture", value: 11.5, unit: "%", passed: true, notes: null }
          ]
        }
        const post = (body: unknown) => call("POST", `${base}/lab_results`, { token: me.access, json: body })
        const before = yield* count
        const cases: ReadonlyArray<readonly [string, unknown, string, ReadonlyArray<string>]> = [
          ["overall_passed disagrees", { ...good, overall_passed: true }, "overall_passed", ["failed"]],
          [
            "an unknown category",
            { ...good, results: [{ ...good.results[0], category: "vibes" }, good.results[1]] },
            "results.0.category",
            ["vibes", "pesticides"]
          ],
          [
            "an unknown unit",
            { ...good, results: [good.results[0], { ...good.results[1], unit: "furlongs" }] },
            "results.1.unit",
            ["furlongs", "%"]
          ],
          ["another lab's name", { ...good, lab_name: "Acme Labs" }, "lab_name", ["Acme Labs", lab.name]],
          ["another lab's licence", { ...good, lab_license: "NOPE-1" }, "lab_license", ["NOPE-1", lab.license_number]]
        ]
        for (const [what, body, param, mentions] of cases) {
          const refused = yield* post(body)
          assert.strictEqual(refused.status, 400, `${what}: ${JSON.stringify(refused.body)}`)
          assert.strictEqual(refused.body.error.code, "invalid_parameter", what)
          assert.strictEqual(refused.body.error.param, param, `${what}: ${JSON.stringify(refused.body)}`)
          for (const m of mentions) assert.include(refused.body.error.message, m, what)
        }
        assert.strictEqual(yield* count, before, "a refused lab result changed nothing")

        const created = yield* post(good)
        assert.strictEqual(created.status, 201, JSON.stringify(created.body))
        const kept = (r: any) => ({
          package_id: r.package_id,
          lab_name: r.lab_name,
          lab_license: r.lab_license,
          overall_passed: r.overall_passed,
          test_date: r.test_date,
          // BioTrack lists a result's tests by panel
          results: [...r.results].sort((x: any, y: any) => x.name.localeCompare(y.name)).map((t: any) => ({
            name: t.name,
            category: t.category,
            value: t.value,
            unit: t.unit,
            passed: t.passed,
            notes: t.notes
          }))
        })
        assert.deepStrictEqual(kept(created.body.data), kept(good), "the answer is what was sent")
        const got = yield* call("GET", `${base}/lab_results/${created.body.data.id}`, { token: me.access })
        assert.deepStrictEqual(kept(got.body.data), kept(good), "the read is what was sent")
        assert.strictEqual(yield* count, before + 1)
      }).pipe(Effect.provide(TestApp)))
  }
})
