/**
 * `RowCache` on Postgres (issue #35): two nodes (two `Database.layerPg`, each with its own pool and
 * listener) on one fresh schema. The token, organisation, client and connection rows a request reads
 * are kept by each node and read again from its memory with no SQL statement, and a change made on
 * node A (a token revoked, a client revoked, a connection disconnected, a plan changed) is what node
 * B's very next read answers (DECISIONS "Several API nodes"), as is a change made by a third
 * session with plain SQL (`npm run admin`, an operator's psql), once its notice arrives.
 */
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Context } from "effect"
import { Effect, Exit, Layer, Option, Redacted, Scope, Tracer } from "effect"
import { randomUUID } from "node:crypto"
import { Accounts } from "../src/persistence/Accounts.js"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Database from "../src/persistence/Database.js"
import { Tokens } from "../src/persistence/Tokens.js"
import { freshSchema, testDatabaseUrl } from "./support/PgSchema.js"

const url = testDatabaseUrl("RowCache.pg.test.ts")

type Node = Context.Context<Database.Persistence>

const scope = Effect.runSync(Scope.make())
let schemaUrl = ""
let a: Node
let b: Node

beforeAll(async () => {
  schemaUrl = await Effect.runPromise(Scope.extend(freshSchema(url, "rowcache"), scope))
  a = await Effect.runPromise(Layer.buildWithScope(Database.layerPg(Redacted.make(schemaUrl)), scope))
  b = await Effect.runPromise(Layer.buildWithScope(Database.layerPg(Redacted.make(schemaUrl)), scope))
}, 60_000)

afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)), 30_000)

/** Runs `effect` on `node`; returns its value and the SQL statements it made. */
const on = <A>(node: Node, effect: Effect.Effect<A, never, Database.Persistence>) =>
  Effect.gen(function*() {
    const native = yield* Effect.tracer
    let statements = 0
    const counting = Tracer.make({
      span(name, parent, context, links, startTime, kind, options) {
        if (name === "sql.execute") statements++
        return native.span(name, parent, context, links, startTime, kind, options)
      },
      context: native.context
    })
    const value = yield* effect.pipe(Effect.provide(node), Effect.withTracer(counting), Effect.withTracerEnabled(true))
    return { value, statements }
  })

/** Reads the four rows a request reads, on `node`. */
const reads = (ids: { token: string; organisation: string; client: string; connection: string }) =>
  Effect.gen(function*() {
    const tokens = yield* Tokens
    const accounts = yield* Accounts
    const connections = yield* ConnectionStore
    return {
      token: Option.getOrThrow(yield* tokens.getToken(ids.token)),
      organisation: Option.getOrThrow(yield* accounts.getOrganisation(ids.organisation)),
      client: Option.getOrThrow(yield* accounts.getClient(ids.client)),
      connection: Option.getOrThrow(yield* connections.getConnection(ids.connection))
    }
  })

/** Reads on `node` until a read makes no statement (the listener is up and the rows are kept). */
const warm = (node: Node, ids: Parameters<typeof reads>[0]) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100; i++) {
      const read = yield* on(node, reads(ids))
      if (read.statements === 0) return read
      yield* Effect.sleep("50 millis")
    }
    return assert.fail("the rows were never read from memory: every read made SQL statements")
  })

const seed = Effect.gen(function*() {
  const now = Date.now()
  const n = randomUUID().slice(0, 8)
  const ids = { token: `hash-${n}`, organisation: `org-${n}`, client: `client-${n}`, connection: `conn-${n}` }
  const accounts = yield* Accounts
  yield* accounts.insertOrganisation({ id: ids.organisation, name: "Row cache", plan: "sandbox", created_at: now })
  yield* accounts.insertClient({
    id: ids.client,
    organisation_id: ids.organisation,
    secret_hash: "x",
    created_at: now,
    revoked_at: null
  })
  yield* (yield* Tokens).insertToken({
    hash: ids.token,
    kind: "access",
    organisation_id: ids.organisation,
    client_id: ids.client,
    connection_id: null,
    family: null,
    scope: "sandbox",
    expires_at: now + 3_600_000,
    created_at: now,
    used_at: null,
    revoked_at: null
  })
  const connection: Connection = {
    id: ids.connection,
    organisation_id: ids.organisation,
    provider: "provider_a",
    state: "CO",
    status: "active",
    is_sandbox: true,
    external_id: null,
    credentials: null,
    key_id: null,
    token_issued: true,
    created_at: now,
    updated_at: now,
    sandbox_version: 0,
    sandbox_fault: null
  }
  yield* (yield* ConnectionStore).insertConnection(connection)
  return ids
})

describe("RowCache on Postgres, two nodes", () => {
  it.live(
    "kept rows are read with no SQL, and a revocation on node A is what node B reads next",
    () =>
      Effect.gen(function*() {
        const ids = (yield* on(a, seed)).value
        // both nodes keep the rows: a read makes no statement
        yield* warm(a, ids)
        const before = yield* warm(b, ids)
        assert.isNull(before.value.token.revoked_at)

        // node A revokes the token: node B's very next read sees it
        yield* on(a, Effect.flatMap(Tokens, (t) => t.revokeClientTokens(ids.client, Date.now())))
        const afterToken = yield* on(b, reads(ids))
        assert.isNotNull(afterToken.value.token.revoked_at, "node B answered the revoked token from its cache")
        assert.isAbove(afterToken.statements, 0)

        // node A revokes the client
        yield* warm(b, ids)
        yield* on(a, Effect.flatMap(Accounts, (x) => x.revokeClient(ids.client, Date.now())))
        assert.isNotNull((yield* on(b, reads(ids))).value.client.revoked_at, "node B kept the revoked client")

        // node A disconnects the connection
        yield* warm(b, ids)
        yield* on(a, Effect.flatMap(ConnectionStore, (c) => c.updateConnection(ids.connection, { status: "inactive" })))
        assert.strictEqual((yield* on(b, reads(ids))).value.connection.status, "inactive")

        // node A's own next read sees its own write, too
        yield* warm(a, ids)
        yield* on(a, Effect.flatMap(Accounts, (x) => x.setPlan(ids.organisation, "production")))
        assert.strictEqual((yield* on(a, reads(ids))).value.organisation.plan, "production")
      }),
    60_000
  )

  it.live(
    "a change made with plain SQL by another session reaches both nodes' caches by its notice",
    () =>
      Effect.gen(function*() {
        const ids = (yield* on(a, seed)).value
        yield* warm(a, ids)
        yield* warm(b, ids)
        yield* Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql`UPDATE organisations SET name = ${"Renamed by hand"} WHERE id = ${ids.organisation}`
        ).pipe(
          Effect.provide(PgClient.layer({ url: Redacted.make(schemaUrl) }))
        )
        for (const node of [a, b]) {
          let name = ""
          for (let i = 0; i < 40 && name !== "Renamed by hand"; i++) {
            name = (yield* on(node, reads(ids))).value.organisation.name
            if (name !== "Renamed by hand") yield* Effect.sleep("25 millis")
          }
          assert.strictEqual(name, "Renamed by hand", "the notice of a change by another session never arrived")
        }
      }),
    60_000
  )
})
