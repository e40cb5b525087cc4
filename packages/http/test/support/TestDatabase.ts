/**
 * The database of the tests: the service's own SQL repository on SQLite, in a private temporary
 * file per layer (removed when the layer is released), migrated as `npm start` migrates it. No
 * test runs on an in-memory stand-in.
 */
import { Layer } from "effect"
import * as Database from "../../src/persistence/Database.js"
import type { Repo } from "../../src/persistence/Repo.js"

export const layer: Layer.Layer<Repo> = Layer.orDie(Database.layerSqlite(":memory:"))
