/**
 * A `SyncStore` on a SQLite file of its own, in a fresh temporary folder removed when the layer's
 * scope closes (a file named by process id could meet one left by an earlier run).
 */
import { LibsqlClient } from "@effect/sql-libsql"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as SyncStore from "../../src/SyncStore.js"

/** A migrated store on a fresh file. */
export const layer = (): Layer.Layer<SyncStore.SyncStore> =>
  Layer.unwrapScoped(Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-sync-test-"))),
      (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
    ),
    (dir) =>
      Layer.effect(SyncStore.SyncStore, Effect.zipRight(SyncStore.migration, SyncStore.make)).pipe(
        Layer.provide(LibsqlClient.layer({ url: `file:${path.join(dir, "sync.db")}` })),
        Layer.orDie
      )
  ))
