/**
 * The feed's cursor: what it carries comes back; one of another facility, a damaged one and one
 * older than 30 days are refused with a reason.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as Cursor from "../src/Cursor.js"

const NOW = Date.parse("2026-03-14T16:20:05Z")

describe("Cursor", () => {
  it("round-trips its facility and sequence", () => {
    const text = Cursor.encode({ facility_id: "fac_a", seq: 1042, issued_at: NOW })
    assert.match(text, /^[A-Za-z0-9_-]+$/)
    assert.deepStrictEqual(
      Cursor.decode(text, "fac_a", NOW + 1000),
      Either.right({ facility_id: "fac_a", seq: 1042, issued_at: NOW })
    )
  })

  it("refuses another facility's, a damaged one, and one past 30 days", () => {
    const text = Cursor.encode({ facility_id: "fac_a", seq: 5, issued_at: NOW })
    assert.match(
      Either.getLeft(Cursor.decode(text, "fac_b", NOW)).pipe((o) => o._tag === "Some" ? o.value : ""),
      /another facility/
    )
    for (const bad of ["", "notacursor", text.slice(0, -3), "a".repeat(600), "eyJ2IjoyfQ"]) {
      assert.isTrue(Either.isLeft(Cursor.decode(bad, "fac_a", NOW)), bad)
    }
    assert.isTrue(Either.isRight(Cursor.decode(text, "fac_a", NOW + Cursor.VALIDITY_MS)))
    assert.match(
      Either.getLeft(Cursor.decode(text, "fac_a", NOW + Cursor.VALIDITY_MS + 1)).pipe((o) =>
        o._tag === "Some" ? o.value : ""
      ),
      /30 days/
    )
  })
})
