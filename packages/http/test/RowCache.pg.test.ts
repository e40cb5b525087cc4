/**
 * `RowCache` on Postgres (issue #35, ADR 0030): two nodes (two `Database.layerPg`, each with its own
 * pool) on one fresh schema. The token, organisation, client and connection rows a request reads are
 * kept by each node and a request that reads them all makes one SQL statement, the read of the row
 * generation; a change made on node A (a token revoked, a client revoked, a connection
 * disconnected, a plan changed) is what node B's very next request answers (DECISIONS "Several API
 * nodes"), as is a change made by a third session with plain SQL (an operator's psql), with no
 * waiting and no retry.
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
import * as RowCache from "../src/persistence/RowCache.js"
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

/** Runs `effect` on `node` as one request; returns its value and the SQL statements it made. */
const on = <A>(node: Node, effect: Effect.Effect<A, never, Database.Persistence>) =>
  Effect.gen(function*() {
    const native = yield* Effect.tracer
    const statements: Array<string> = []
    const counting = Tracer.make({
      span(name, parent, context, links, startTime, kind, options) {
        const span = native.span(name, parent, context, links, startTime, kind, options)
        if (name === "sql.execute") {
          statements.push(name)
          const attribute = span.attribute.bind(span)
          const index = statements.length - 1
          span.attribute = (key, value) => {
            if (key === "db.query.text") statements[index] = String(value)
            attribute(key, value)
          }
          for (const [key, value] of span.attributes) if (key === "db.query.text") statements[index] = String(value)
        }
        return span
      },
      context: native.context
    })
    const value = yield* RowCache.perRequest(effect).pipe(
      Effect.provide(node),
      Effect.withTracer(counting),
      Effect.withTracerEnabled(true)
    )
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

/** Reads on `node` twice: the second request reads the four rows with one statement, the generation. */
const warm = (node: Node, ids: Parameters<typeof reads>[0]) =>
  Effect.gen(function*() {
    yield* on(node, reads(ids))
    const read = yield* on(node, reads(ids))
    assert.strictEqual(read.statements.length, 1, `a kept read made ${read.statements.join("; ")}`)
    assert.match(read.statements[0] ?? "", /row_generation/)
    return read
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

// One after the other: a change made by one test moves the generation the other counts statements
// against.
describe.sequential("RowCache on Postgres, two nodes", () => {
  it.live(
    "a kept read makes one statement (the generation), and a revocation on node A is refused on node B's next request",
    () =>
      Effect.gen(function*() {
        const ids = (yield* on(a, seed)).value
        // the first request reads the generation and the four rows; the next one only the generation
        const first = yield* on(b, reads(ids))
        assert.strictEqual(first.statements.length, 5, first.statements.join("; "))
        yield* warm(a, ids)
        const before = yield* warm(b, ids)
        assert.isNull(before.value.token.revoked_at)

        // node A revokes the token: node B's very next request sees it
        yield* on(a, Effect.flatMap(Tokens, (t) => t.revokeClientTokens(ids.client, Date.now())))
        const afterToken = yield* on(b, reads(ids))
        assert.isNotNull(afterToken.value.token.revoked_at, "node B answered the revoked token from its cache")
        assert.strictEqual(afterToken.statements.length, 5)

        // node A revokes the client
        yield* warm(b, ids)
        yield* on(a, Effect.flatMap(Accounts, (x) => x.revokeClient(ids.client, Date.now())))
        assert.isNotNull((yield* on(b, reads(ids))).value.client.revoked_at, "node B kept the revoked client")

        // node A disconnects the connection
        yield* warm(b, ids)
        yield* on(a, Effect.flatMap(ConnectionStore, (c) => c.updateConnection(ids.connection, { status: "inactive" })))
        assert.strictEqual((yield* on(b, reads(ids))).value.connection.status, "inactive")

        // node A's own next request sees its own write, too
        yield* warm(a, ids)
        yield* on(a, Effect.flatMap(Accounts, (x) => x.setPlan(ids.organisation, "production")))
        assert.strictEqual((yield* on(a, reads(ids))).value.organisation.plan, "production")

        // and so does a request that writes and then reads (its generation read is forgotten)
        yield* warm(a, ids)
        const same = yield* on(
          a,
          Effect.zipRight(
            Effect.zipRight(reads(ids), Effect.flatMap(Accounts, (x) => x.setPlan(ids.organisation, "sandbox"))),
            reads(ids)
          )
        )
        assert.strictEqual(same.value.organisation.plan, "sandbox")
      }),
    60_000
  )

  it.live(
    "a change made with plain SQL by another session is seen by both nodes' very next request",
    () =>
      Effect.gen(function*() {
        const ids = (yield* on(a, seed)).value
        yield* warm(a, ids)
        yield* warm(b, ids)
        const by = (statement: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
          Effect.flatMap(SqlClient.SqlClient, statement).pipe(
            Effect.provide(PgClient.layer({ url: Redacted.make(schemaUrl) })),
            Effect.orDie
          )
        yield* by((sql) => sql`UPDATE organisations SET name = ${"Renamed by hand"} WHERE id = ${ids.organisation}`)
        for (const node of [a, b]) {
          assert.strictEqual((yield* on(node, reads(ids))).value.organisation.name, "Renamed by hand")
        }
        // a token revoked by hand, and a connection deleted by hand
        yield* warm(a, ids)
        yield* warm(b, ids)
        yield* by((sql) => sql`UPDATE tokens SET revoked_at = ${Date.now()} WHERE hash = ${ids.token}`)
        for (const node of [a, b]) {
          assert.isNotNull((yield* on(node, reads(ids))).value.token.revoked_at)
        }
        yield* by((sql) => sql`DELETE FROM connections WHERE id = ${ids.connection}`)
        for (const node of [a, b]) {
          const gone = yield* on(node, Effect.flatMap(ConnectionStore, (c) => c.getConnection(ids.connection)))
          assert.isTrue(Option.isNone(gone.value), "a node answered a deleted connection from its cache")
        }
      }),
    60_000
  )
})
