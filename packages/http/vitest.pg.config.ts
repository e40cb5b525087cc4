import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { SummaryReporter } from "../../scripts/SummaryReporter.js"
import { shared } from "../../vitest.shared.js"

/**
 * Suites that stop the Postgres cluster (`pg_ctlcluster … stop`): they run alone, after every
 * other `*.pg.test.ts` file has finished (a later `groupOrder`), never beside a suite that needs
 * the database.
 */
const alone = ["test/DatabaseRestart.pg.test.ts"]

/**
 * The Postgres run alone: `npm run test:pg` with `TEST_DATABASE_URL` set. The shared settings,
 * but only `*.pg.test.ts`, ending with the same `tests: N passed, N failed, N skipped` line.
 */
export default defineConfig({
  ...shared,
  root: path.dirname(fileURLToPath(import.meta.url)),
  test: {
    ...shared.test,
    // each project names its files (a project's `include` is added to this one)
    include: [],
    reporters: ["default", new SummaryReporter()],
    projects: [
      {
        extends: true,
        test: { name: "http-pg", include: ["test/**/*.pg.test.ts"], exclude: alone, sequence: { groupOrder: 0 } }
      },
      {
        extends: true,
        test: { name: "http-pg-alone", include: alone, sequence: { groupOrder: 1 } }
      }
    ]
  }
})
