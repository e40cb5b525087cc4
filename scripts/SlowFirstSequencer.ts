import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The suites that take longest (40 s or more on the two-core CI machine, from its logs), longest
 * first. Vitest runs the files it has no timings for largest first; on a clean clone it has none,
 * and several of these files are small (their cases live in other modules), so they started last
 * and the run ended with one of them running alone. Started first, they overlap the rest.
 */
const SLOW = [
  "packages/http/test/SandboxModel.test.ts",
  "packages/http/test/abuse/Abuse.test.ts",
  "packages/http/test/abuse/Abuse.pg.test.ts",
  "packages/http/test/ManagedSync.test.ts",
  "packages/http/test/Fuzz.test.ts",
  "packages/dashboard/test/WebhooksPages.test.ts",
  "packages/sandbox/test/providers/provider-a/Adapter.test.ts",
  "packages/http/test/SyncReads.test.ts",
  "packages/http/test/MultiNode.pg.test.ts",
  "packages/dashboard/test/Pages.test.ts",
  "packages/sandbox/test/Scaffold.test.ts",
  "packages/sandbox/test/ProviderAEmulator.test.ts",
  "packages/http/test/SyncReads.pg.test.ts",
  "packages/http/test/OpenApiResponses.test.ts",
  "packages/http/test/Shutdown.test.ts",
  "packages/cli/test/Commands.test.ts"
]

/**
 * Vitest's own order (failed first, then longest first from its cache, else largest first), with
 * the suites above moved to the front in their order.
 */
export class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    const rank = (file: TestSpecification) => {
      const path = file.moduleId.split("\\").join("/")
      const at = SLOW.findIndex((slow) => path.endsWith(`/${slow}`))
      return at === -1 ? SLOW.length : at
    }
    // a stable sort: every other file keeps vitest's order
    return sorted.map((file, i) => ({ file, i, rank: rank(file) }))
      .sort((a, b) => a.rank - b.rank || a.i - b.i)
      .map(({ file }) => file)
  }
}
