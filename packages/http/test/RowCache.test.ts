/**
 * The auth-row cache on the embedded database (`RowCache`, installed by `Database.layerSqlite`):
 * it saves the reads while nothing commits, and a commit by any connection, another process's on
 * the same file included, is seen by the very next read (no revoked token or moved connection is
 * ever served). The whole repository suite runs through it too (`Repo.test.ts`).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Database from "@tracebridge/http/persistence/Database"
import type { Connection, Service, Token } from "@tracebridge/http/persistence/Repo"
import { Repo } from "@tracebridge/http/persistence/Repo"
import * as RowCache from "@tracebridge/http/persistence/RowCache"
import { Context, Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll } from "vitest"

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

/** Two processes' repositories on one database file (each with its own connections and cache). */
const twoProcesses = (name: string) =>
  Effect.gen(function*() {
    const file = path.join(dir, name, "tracebridge.db")
    const a = Context.get(yield* Layer.build(Database.layerSqlite(file)), Repo)
    const b = Context.get(yield* Layer.build(Database.layerSqlite(file)), Repo)
    return { a, b }
  })

describe("RowCache", () => {
  it.scoped("another process's revocation and connection change are seen by the next read", () =>
    Effect.gen(function*() {
      const { a, b } = yield* twoProcesses("revoke")
      yield* a.insertToken(token("tok_1"))
      yield* a.insertConnection(connection("conn_1"))
      assert.isNull(Option.getOrThrow(yield* a.getToken("tok_1")).revoked_at)
      assert.strictEqual(Option.getOrThrow(yield* a.getConnection("conn_1")).status, "active")
      // the other process revokes and disconnects: no wait, no TTL
      yield* b.revokeFamily("fam_1", 5)
      yield* b.updateConnection("conn_1", { status: "inactive", updated_at: 5 })
      assert.strictEqual(Option.getOrThrow(yield* a.getToken("tok_1")).revoked_at, 5)
      assert.strictEqual(Option.getOrThrow(yield* a.getConnection("conn_1")).status, "inactive")
      // and a sandbox write there moves the version this process reads
      assert.isTrue(yield* b.appendSandboxChanges("conn_1", 0, [{ change: "{}", created_at: 6 }]))
      assert.strictEqual(Option.getOrThrow(yield* a.getConnection("conn_1")).sandbox_version, 1)
    }))

  it.effect("keeps rows while nothing commits, never a miss, and nothing read in a transaction", () =>
    Effect.gen(function*() {
      const rows = new Map<string, Token>([["tok_1", token("tok_1")]])
      let reads = 0
      let version = 1
      const base = {
        getToken: (hash: string) =>
          Effect.sync(() => {
            reads++
            return Option.fromNullable(rows.get(hash))
          }),
        transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => effect
      } as unknown as Service
      const cached = RowCache.wrap(base, () => version)
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
      // read inside a transaction: not kept
      version++
      yield* cached.transaction(cached.getToken("tok_1"))
      yield* cached.getToken("tok_1")
      assert.strictEqual(reads, 6)
    }))
})
