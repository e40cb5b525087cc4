import { defineConfig } from "vitest/config"
import { SummaryReporter } from "./scripts/SummaryReporter.js"

/**
 * The root run: every package is a project, and the run ends with one plain
 * `N passed, N failed, N skipped` line that CI reads.
 */
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "examples/*/vitest.config.ts"],
    reporters: ["default", new SummaryReporter()]
  }
})
