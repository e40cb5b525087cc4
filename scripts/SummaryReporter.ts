import type { Reporter, TestModule } from "vitest/node"

/**
 * Prints one closing line, `tests: N passed, N failed, N skipped`, after vitest's own summary,
 * so that CI can read the outcome of the whole run from the last line of output.
 */
export class SummaryReporter implements Reporter {
  private line = "tests: 0 passed, 1 failed, 0 skipped"

  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0
    let failed = 0
    let skipped = 0
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state
        if (state === "passed") passed++
        else if (state === "failed") failed++
        else skipped++
      }
      // A file that failed to load has no tests but must still count as a failure.
      if (module.state() === "failed" && module.children.size === 0) failed++
    }
    failed += unhandledErrors.length
    this.line = `tests: ${passed} passed, ${failed} failed, ${skipped} skipped`
  }

  // The default reporter prints its summary here; this reporter is listed after it.
  onFinished(): void {
    process.stdout.write(`\n${this.line}\n`)
  }
}
