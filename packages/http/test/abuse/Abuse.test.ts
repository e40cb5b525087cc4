/**
 * The abuse suite on the embedded SQLite, against the built server (issue #28, `docs/security.md`).
 */
import { describe } from "@effect/vitest"
import { suites } from "./suites.js"

for (const [name, suite] of suites) describe(name, () => suite("sqlite"))
