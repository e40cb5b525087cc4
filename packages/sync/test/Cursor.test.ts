/**
 * The feed's cursor (issue #28): what it carries comes back; it is signed (HMAC-SHA256 under the
 * server key) and bound to the organisation, connection and facility, so a forged one, a changed
 * one, one of another organisation, connection or facility, one signed under another key, and one
 * older than 30 days (its signed issue time) are refused with a reason.
 */
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { randomBytes } from "node:crypto"
import * as Cursor from "../src/Cursor.js"

const NOW = Date.parse("2026-03-14T16:20:05Z")
const KEY = [randomBytes(32)]
const FEED: Cursor.Binding = { organisation_id: "org_a", connection_id: "conn_a", facility_id: "fac_a" }

const reason = (e: Either.Either<Cursor.Position, string>) => Either.isLeft(e) ? e.left : ""

describe("Cursor", () => {
  it("round-trips its sequence and issue time", () => {
    const text = Cursor.encode(KEY, FEED, { seq: 1042, issued_at: NOW })
    assert.match(text, /^v2\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/)
    assert.deepStrictEqual(Cursor.decode(KEY, text, FEED, NOW + 1000), Either.right({ seq: 1042, issued_at: NOW }))
  })

  it("refuses another organisation's, connection's or facility's, a forged one and a changed one", () => {
    const text = Cursor.encode(KEY, FEED, { seq: 5, issued_at: NOW })
    for (
      const other of [
        { ...FEED, organisation_id: "org_b" },
        { ...FEED, connection_id: "conn_b" },
        { ...FEED, facility_id: "fac_b" }
      ]
    ) {
      assert.match(reason(Cursor.decode(KEY, text, other, NOW)), /not one this API issued/)
    }
    // the unsigned cursor of before (base64url JSON), and one signed under another key
    const unsigned = Buffer.from(JSON.stringify({ v: 1, f: "fac_a", s: 0, t: NOW })).toString("base64url")
    const foreign = Cursor.encode([randomBytes(32)], FEED, { seq: 5, issued_at: NOW })
    const [v, payload, mac] = text.split(".")
    const moved = Buffer.from(JSON.stringify({ s: 0, t: NOW })).toString("base64url")
    const younger = Buffer.from(JSON.stringify({ s: 5, t: NOW + 1000 })).toString("base64url")
    for (
      const bad of [
        "",
        "notacursor",
        unsigned,
        foreign,
        `${v}.${moved}.${mac}`,
        `${v}.${younger}.${mac}`,
        // a different first character (six whole bits of the MAC; the last one's low bits are padding)
        `${v}.${payload}.${mac![0] === "A" ? "B" : "A"}${mac!.slice(1)}`,
        text.slice(0, -3),
        "a".repeat(600)
      ]
    ) {
      assert.isTrue(Either.isLeft(Cursor.decode(KEY, bad, FEED, NOW)), bad)
    }
  })

  it("refuses one past 30 days from its signed issue time", () => {
    const text = Cursor.encode(KEY, FEED, { seq: 5, issued_at: NOW })
    assert.isTrue(Either.isRight(Cursor.decode(KEY, text, FEED, NOW + Cursor.VALIDITY_MS)))
    assert.match(reason(Cursor.decode(KEY, text, FEED, NOW + Cursor.VALIDITY_MS + 1)), /30 days/)
  })

  it("accepts one signed under a previous key (the second of the keys)", () => {
    const old = [randomBytes(32)]
    const text = Cursor.encode(old, FEED, { seq: 7, issued_at: NOW })
    assert.isTrue(Either.isRight(Cursor.decode([KEY[0]!, old[0]!], text, FEED, NOW)))
    assert.isTrue(Either.isLeft(Cursor.decode(KEY, text, FEED, NOW)))
  })
})
