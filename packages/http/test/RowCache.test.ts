/**
 * The auth-row cache on the embedded database (`RowCache`, installed by `Database.layerSqlite`):
 * it saves the reads while nothing commits, and a commit by any connection, another process's on
 * the same file included, is seen by the very next read (no revoked token or moved connection is
 * ever served). The whole stores' suite runs through it too (`Persistence.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"
import type { ApiClient, Organisation } from "../src/persistence/Accounts.js"
import { Accounts } from "../src/persistence/Accounts.js"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import * as Database from "../src/persistence/Database.js"
import * as RowCache from "../src/persistence/RowCache.js"
import { SandboxLog } from "../src/persistence/SandboxLog.js"
import type { Token } from "../src/persistence/Tokens.js"
import { Tokens } from "../src/persistence/Tokens.js"
import { Transactions } from "../src/persistence/Transactions.js"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tracebridge-rowcache-test-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const token = (hash: string): Token => ({
  hash,
  kind: "access",
  organisation_id: "org_1",
  client_id: "client_1",
  connection_id: null,
  family: "fam_1",
  scope: "sandbox",
  expires_at: null,
  created_at: 0,
  used_at: null,
  revoked_at: null
})

const connection = (id: string): Connection => ({
  id,
  organisation_id: "org_1",
  provider: "provider_a",
  state: "CO",
  status: "active",
  is_sandbox: true,
  external_id: null,
  credentials: null,
  key_id: null,
  token_issued: true,
  created_at: 0,
  updated_at: 0,
  sandbox_version: 0,
  sandbox_fault: null
})

/** Two processes' stores on one database file (each with its own connections and cache). */
const twoProcesses = (name: string) =>
  Effect.gen(function*() {
    const file = path.join(dir, name, "tracebridge.db")
    const stores = (context: Context.Context<Database.Persistence>) => ({
      accounts: Context.get(context, Accounts),
      tokens: Context.get(context, Tokens),
      connections: Context.get(context, ConnectionStore),
      sandboxLog: Context.get(context, SandboxLog),
      transactions: Context.get(context, Transactions)
    })
    const a = stores(yield* Layer.build(Database.layerSqlite(file)))
    const b = stores(yield* Layer.build(Database.layerSqlite(file)))
    return { a, b }
  })

describe("RowCache", () => {
  it.scoped("another process's revocation and connection change are seen by the next read", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoProcesses("revoke")
      yield* a.tokens.insertToken(token("tok_1"))
      yield* a.connections.insertConnection(connection("conn_1"))
      assert.isNull(Option.getOrThrow(yield* a.tokens.getToken("tok_1")).revoked_at)
      assert.strictEqual(Option.getOrThrow(yield* a.connections.getConnection("conn_1")).status, "active")
      // the other process revokes and disconnects: no wait, no TTL
      yield* b.tokens.revokeFamily("fam_1", 5)
      yield* b.connections.updateConnection("conn_1", { status: "inactive", updated_at: 5 })
      assert.strictEqual(Option.getOrThrow(yield* a.tokens.getToken("tok_1")).revoked_at, 5)
      assert.strictEqual(Option.getOrThrow(yield* a.connections.getConnection("conn_1")).status, "inactive")
      // and a sandbox write there moves the version this process reads
      assert.isTrue(yield* b.sandboxLog.appendSandboxChanges("conn_1", 0, [{ change: "{}", created_at: 6 }]))
      assert.strictEqual(Option.getOrThrow(yield* a.connections.getConnection("conn_1")).sandbox_version, 1)
    }))

  it.effect("reads the data version once per request, not once per cached row (issue #35)", () =>
    Effect.gen(function*() {
      let checks = 0
      const org = { id: "org_1" } as unknown as Organisation
      const stores = RowCache.wrapChecked(
        {
          accounts: {
            getOrganisation: (_id: string) => Effect.succeed(Option.some(org)),
            getClient: (_id: string) => Effect.succeed(Option.none<ApiClient>())
          },
          tokens: { getToken: (hash: string) => Effect.succeed(Option.some(token(hash))) },
          connections: { getConnection: (id: string) => Effect.succeed(Option.some(connection(id))) }
        },
        Effect.sync(() => {
          checks++
          return 1
        })
      )
      // a request's three cached reads (token, organisation, connection): one check
      yield* RowCache.perRequest(Effect.all([
        stores.tokens.getToken("tok_1"),
        stores.accounts.getOrganisation("org_1"),
        stores.connections.getConnection("conn_1")
      ]))
      assert.strictEqual(checks, 1)
      // the next request checks again
      yield* RowCache.perRequest(stores.tokens.getToken("tok_1"))
      assert.strictEqual(checks, 2)
      // outside a request, every cached read checks
      yield* stores.tokens.getToken("tok_1")
      yield* stores.tokens.getToken("tok_1")
      assert.strictEqual(checks, 4)
    }))

  it.scoped("a request sees its own write, and another process's write at its next request", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoProcesses("own-write")
      yield* a.tokens.insertToken(token("tok_ow"))
      yield* a.connections.insertConnection(connection("conn_ow"))
      yield* RowCache.perRequest(Effect.gen(function*() {
        assert.isNull(Option.getOrThrow(yield* a.tokens.getToken("tok_ow")).revoked_at)
        // this request's own writes are seen by its next reads
        yield* a.tokens.revokeFamily("fam_1", 7)
        assert.strictEqual(Option.getOrThrow(yield* a.tokens.getToken("tok_ow")).revoked_at, 7)
        yield* a.connections.updateConnection("conn_ow", { status: "inactive", updated_at: 7 })
        assert.strictEqual(Option.getOrThrow(yield* a.connections.getConnection("conn_ow")).status, "inactive")
      }))
      // another process's write: seen by the next request
      yield* b.connections.updateConnection("conn_ow", { status: "active", updated_at: 8 })
      const seen = yield* RowCache.perRequest(a.connections.getConnection("conn_ow"))
      assert.strictEqual(Option.getOrThrow(seen).status, "active")
    }))

  it.scoped("a row read inside a transaction that rolls back is never served afterwards", () =>
    Effect.gen(function*() {
      const { a } = yield* twoProcesses("rollback")
      const result = yield* Effect.either(a.transactions.transaction(Effect.gen(function*() {
        yield* a.tokens.insertToken(token("tok_rb"))
        // read on the transaction's connection: the uncommitted row is there, and no commit has moved the version
        assert.isTrue(Option.isSome(yield* a.tokens.getToken("tok_rb")))
        return yield* Effect.fail("rolled back" as const)
      })))
      assert.deepStrictEqual(result, Either.left("rolled back" as const))
      assert.isTrue(Option.isNone(yield* a.tokens.getToken("tok_rb")))
    }))

  it.effect("keeps rows while nothing commits, never a miss, and nothing read in a transaction", () =>
    Effect.gen(function*() {
      const rows = new Map<string, Token>([["tok_1", token("tok_1")]])
      let reads = 0
      let version = 1
      const { tokens: cached } = RowCache.wrapChecked({
        accounts: {
          getOrganisation: (_id: string) => Effect.succeed(Option.none<Organisation>()),
          getClient: (_id: string) => Effect.succeed(Option.none<ApiClient>())
        },
        tokens: {
          getToken: (hash: string) =>
            Effect.sync(() => {
              reads++
              return Option.fromNullable(rows.get(hash))
            })
        },
        connections: { getConnection: (_id: string) => Effect.succeed(Option.none<Connection>()) }
      }, Effect.sync(() => version))
      yield* cached.getToken("tok_1")
      yield* cached.getToken("tok_1")
      assert.strictEqual(reads, 1)
      // a miss is read again (a token issued a moment ago is never hidden)
      yield* cached.getToken("tok_2")
      rows.set("tok_2", token("tok_2"))
      assert.isTrue(Option.isSome(yield* cached.getToken("tok_2")))
      assert.strictEqual(reads, 3)
      // a commit anywhere: read again
      version++
      yield* cached.getToken("tok_1")
      assert.strictEqual(reads, 4)
      // read inside a transaction (what `Transactions.transaction` marks): not kept
      version++
      yield* RowCache.transactional(cached.getToken("tok_1"))
      yield* cached.getToken("tok_1")
      assert.strictEqual(reads, 6)
    }))
})
