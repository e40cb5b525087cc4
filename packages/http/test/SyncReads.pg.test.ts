/**
 * Reads from the synced store on Postgres (`npm run test:pg`, TEST_DATABASE_URL; a fresh schema):
 * the same suite as `SyncReads.test.ts`.
 */
import { describe } from "@effect/vitest"
import { Effect } from "effect"
import * as Database from "../src/persistence/Database.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"
import { syncReadsSuite } from "./support/SyncReadsSuite.js"

const url = testDatabaseUrl("SyncReads.pg.test.ts")

describe("store reads (Postgres, provider_a emulator in production mode)", () => {
  syncReadsSuite(() => Effect.map(freshSchema(url, "sync_reads"), (scoped) => Database.layerPg(scoped)))
})
