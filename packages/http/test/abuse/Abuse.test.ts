/**
 * The abuse suite on the embedded SQLite, against the built server (issue #28, `docs/security.md`).
 * One suite at a time: each starts a server of its own, and several busy servers at once on a
 * small machine measure the machine, not the server.
 */
import { describe } from "@effect/vitest"
import { suites } from "./suites.js"

describe.sequential("abuse (SQLite)", () => {
  for (const [name, suite] of suites) describe.sequential(name, () => suite("sqlite"))
})
