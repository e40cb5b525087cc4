/**
 * The abuse suite on Postgres (`npm run test:pg`, TEST_DATABASE_URL), against the built server
 * (issue #28, `docs/security.md`). One suite at a time, as on SQLite (`Abuse.test.ts`).
 */
import { describe } from "@effect/vitest"
import { suites } from "./suites.js"

describe.sequential("abuse (Postgres)", () => {
  for (const [name, suite] of suites) describe.sequential(name, () => suite("postgres"))
})
