import { availableParallelism } from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"
import { SlowFirstSequencer } from "../../scripts/SlowFirstSequencer.js"
import { SummaryReporter } from "../../scripts/SummaryReporter.js"
import { shared } from "../../vitest.shared.js"
import dashboardProject from "../dashboard/vitest.config.js"

/**
 * Suites that stop the Postgres cluster (`pg_ctlcluster … stop`): they run alone, after every
 * other `*.pg.test.ts` file has finished (a later `groupOrder`), never beside a suite that needs
 * the database.
 */
const alone = ["test/DatabaseRestart.pg.test.ts"]

const here = path.dirname(fileURLToPath(import.meta.url))
const dashboard = path.join(here, "../dashboard")

/**
 * The dashboard's browser tests, on Postgres: the built server started on a fresh schema of
 * `TEST_DATABASE_URL` (`packages/dashboard/test/support/Browser.ts`, with
 * `TRACEBRIDGE_BROWSER_DATABASE=postgres`), with the dashboard project's own settings (each test
 * in order, its timeouts). Each file is a group of its own, after the http suites and before the
 * one that stops the cluster: one browser at a time.
 */
const browserFiles = ["test/Pages.test.ts", "test/Tools.test.ts", "test/WebhooksPages.test.ts", "test/Sso.test.ts"]

/**
 * The Postgres run alone: `npm run test:pg` with `TEST_DATABASE_URL` set. The shared settings,
 * but only `*.pg.test.ts` and the dashboard's browser tests on Postgres, ending with the same
 * `tests: N passed, N failed, N skipped` line.
 */
export default defineConfig({
  ...shared,
  root: here,
  test: {
    ...shared.test,
    // each project names its files (a project's `include` is added to this one)
    include: [],
    // As the root run: two files at once on a two-core machine (vitest's default is one fewer
    // than the CPUs). The browser groups and the suite that stops the cluster still run alone.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1,
    // the longest suites first (within each group), so that a group does not end with one alone
    sequence: { ...shared.test!.sequence, sequencer: SlowFirstSequencer },
    reporters: ["default", new SummaryReporter()],
    projects: [
      {
        extends: true,
        test: { name: "http-pg", include: ["test/**/*.pg.test.ts"], exclude: alone, sequence: { groupOrder: 0 } }
      },
      ...browserFiles.map((file, i) => ({
        extends: true,
        test: {
          name: `dashboard-pg-${path.basename(file, ".test.ts")}`,
          root: dashboard,
          include: [file],
          env: { TRACEBRIDGE_BROWSER_DATABASE: "postgres" },
          testTimeout: dashboardProject.test!.testTimeout!,
          hookTimeout: dashboardProject.test!.hookTimeout!,
          sequence: { ...dashboardProject.test!.sequence, groupOrder: 1 + i }
        }
      })),
      {
        extends: true,
        test: { name: "http-pg-alone", include: alone, sequence: { groupOrder: 1 + browserFiles.length } }
      }
    ]
  }
})
