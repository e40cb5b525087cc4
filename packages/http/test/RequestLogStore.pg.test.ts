/**
 * The request log's store and read service on Postgres (`RequestLogStoreSuite.ts`; `npm run
 * test:pg`, TEST_DATABASE_URL; a fresh schema per test).
 */
import { Effect, Layer, Redacted } from "effect"
import * as Database from "../src/persistence/Database.js"
import { requestLogStoreSuite } from "./RequestLogStoreSuite.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("RequestLogStore.pg.test.ts")

requestLogStoreSuite("RequestLogStore (Postgres)", () =>
  Layer.orDie(Layer.unwrapScoped(
    Effect.map(freshSchema(url, "request_log"), (scoped) => Database.layerPg(Redacted.make(scoped)))
  )))
