/**
 * The database of the tests: the service's own SQL stores on SQLite, in a private temporary
 * file per layer (removed when the layer is released), migrated as `npm start` migrates it. No
 * test runs on an in-memory stand-in.
 */
import { Layer } from "effect"
import * as Database from "../../src/persistence/Database.js"

export const layer: Layer.Layer<Database.Persistence> = Layer.orDie(Database.layerSqlite(":memory:"))
