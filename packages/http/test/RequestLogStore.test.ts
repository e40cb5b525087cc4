/**
 * The request log's store and read service on SQLite (`RequestLogStoreSuite.ts`; the Postgres run
 * is `RequestLogStore.pg.test.ts`).
 */
import { Layer } from "effect"
import * as Database from "../src/persistence/Database.js"
import { requestLogStoreSuite } from "./RequestLogStoreSuite.js"

requestLogStoreSuite("RequestLogStore (SQLite)", () => Layer.orDie(Database.layerSqlite(":memory:")))
