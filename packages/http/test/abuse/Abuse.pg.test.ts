/**
 * The abuse suite on Postgres (`npm run test:pg`, TEST_DATABASE_URL), against the built server
 * (issue #28, `docs/security.md`).
 */
import { describe } from "@effect/vitest"
import { suites } from "./suites.js"

for (const [name, suite] of suites) describe(name, () => suite("postgres"))
