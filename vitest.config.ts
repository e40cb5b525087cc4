import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import { SlowFirstSequencer } from "./scripts/SlowFirstSequencer.js"
import { SummaryReporter } from "./scripts/SummaryReporter.js"

/**
 * The root run: every package is a project, and the run ends with one plain
 * `N passed, N failed, N skipped` line that CI reads.
 */
export default defineConfig({
  test: {
    projects: ["packages/*/vitest.config.ts", "examples/*/vitest.config.ts"],
    // Vitest's default is one worker fewer than the CPUs: one file at a time on a two-core CI
    // machine, where most files wait on child processes and sockets. Two at once there cut the
    // suite from 24 to 17 minutes.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    minWorkers: 1,
    // the longest suites first, so that the run does not end with one of them alone
    sequence: { sequencer: SlowFirstSequencer },
    reporters: ["default", new SummaryReporter()]
  }
})
