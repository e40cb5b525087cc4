import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { SummaryReporter } from "../../scripts/SummaryReporter.js"
import { shared } from "../../vitest.shared.js"

/**
 * The Postgres run alone: `npm run test:pg` with `TEST_DATABASE_URL` set. The shared settings,
 * but only `*.pg.test.ts`, ending with the same `tests: N passed, N failed, N skipped` line.
 */
export default defineConfig({
  ...shared,
  root: path.dirname(fileURLToPath(import.meta.url)),
  test: {
    ...shared.test,
    name: "http-pg",
    include: ["test/**/*.pg.test.ts"],
    reporters: ["default", new SummaryReporter()]
  }
})
