/**
 * Reads from the synced store on SQLite (`support/SyncReadsSuite.ts`): filters that agree with
 * their fields, and totals that count only the rows the store holds (never a skipped row).
 */
import { describe } from "@effect/vitest"
import { Effect } from "effect"
import * as os from "node:os"
import * as path from "node:path"
import * as Database from "../src/persistence/Database.js"
import { syncReadsSuite } from "./support/SyncReadsSuite.js"

describe("store reads (SQLite, provider_a emulator in production mode)", () => {
  syncReadsSuite(() =>
    Effect.sync(() =>
      Database.layerSqlite(path.join(os.tmpdir(), `tracebridge-sync-reads-${process.pid}-${Date.now()}.db`))
    )
  )
})
