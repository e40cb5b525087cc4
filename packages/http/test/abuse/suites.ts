/**
 * Every suite of the abuse run (issue #28), each registered once per backend by `Abuse.test.ts`
 * (SQLite) and `Abuse.pg.test.ts` (Postgres). Add a suite's module here.
 */
import { suite as database } from "./DatabaseAbuse.js"
import type { Suite } from "./Harness.js"
import { suite as harness } from "./HarnessSuite.js"
import { suite as ids } from "./IdsAbuse.js"
import { suite as redirects } from "./RedirectAbuse.js"
import { suite as start } from "./StartAbuse.js"
import { suite as tokens } from "./TokenAbuse.js"
import { suite as webhooks } from "./WebhookAbuse.js"

export const suites: ReadonlyArray<readonly [string, Suite]> = [
  ["harness", harness],
  ["database", database],
  ["ids", ids],
  ["redirects", redirects],
  ["start", start],
  ["tokens", tokens],
  ["webhooks", webhooks]
]
