/**
 * Where a backfill starts and the windows it walks: the licence start or the horizon, whichever is
 * later; 24 h windows that end on the last whole second before the next, oldest first, the last
 * ending at the target; one window from the beginning for a provider of whole tables.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Plan from "../src/Plan.js"

const DAY = 86_400_000
const NOW = Date.parse("2026-03-14T16:20:05.250Z")

describe("Plan", () => {
  it("starts at the licence start or the horizon, whichever is later", () => {
    assert.strictEqual(Plan.startOf(NOW, 365, null), NOW - 365 * DAY)
    assert.strictEqual(Plan.startOf(NOW, 365, "2026-03-01"), Date.parse("2026-03-01"))
    assert.strictEqual(Plan.startOf(NOW, 10, "2020-01-01"), NOW - 10 * DAY)
    assert.strictEqual(Plan.startOf(NOW, 10, "not a date"), NOW - 10 * DAY)
  })

  it("walks 24 h windows that neither overlap nor leave a second out", () => {
    const from = NOW - 3 * DAY
    const plan = Plan.windows(from, NOW, 24)
    assert.strictEqual(plan.length, 4)
    assert.strictEqual(plan[0]!.from, Math.floor(from / 1000) * 1000)
    for (let i = 1; i < plan.length; i++) {
      assert.strictEqual(plan[i]!.from, plan[i - 1]!.to + 1000, "the next window starts a second after the last ends")
      assert.isAtMost(plan[i - 1]!.to - plan[i - 1]!.from!, 24 * 3_600_000 - 1000)
    }
    assert.strictEqual(plan[plan.length - 1]!.to, NOW)
    assert.strictEqual(Plan.indexOf(plan, plan[2]!.from), 2)
    assert.strictEqual(Plan.indexOf(plan, null), 0)
  })

  it("reads a provider of whole tables in one window from the beginning", () => {
    assert.deepStrictEqual(Plan.windows(NOW - DAY, NOW, undefined), [{ from: null, to: NOW }])
  })
})
