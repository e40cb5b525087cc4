/**
 * The short read cache over the repository: what it keeps, for how long, and what empties it.
 * The whole repository suite also runs through it (`Repo.test.ts`): it must not change what the
 * repository does.
 */
import { assert, describe, it } from "@effect/vitest"
import type { Service, Token } from "@tracebridge/http/persistence/Repo"
import { Repo } from "@tracebridge/http/persistence/Repo"
import * as RepoCache from "@tracebridge/http/persistence/RepoCache"
import * as RepoMemory from "@tracebridge/http/persistence/RepoMemory"
import { Effect, Option, TestClock } from "effect"

const token = (hash: string, family = "fam_1"): Token => ({
  hash,
  kind: "access",
  organisation_id: "org_1",
  client_id: "client_1",
  connection_id: null,
  family,
  scope: "sandbox",
  expires_at: null,
  created_at: 0,
  used_at: null,
  revoked_at: null
})

/** The memory repository, counting the reads that reach it. */
const counted = Effect.gen(function*() {
  const repo = yield* Repo
  const reads = { tokens: 0 }
  const base: Service = {
    ...repo,
    getToken: (hash) => Effect.zipRight(Effect.sync(() => reads.tokens++), repo.getToken(hash))
  }
  return { base, reads }
}).pipe(Effect.provide(RepoMemory.layer))

describe("RepoCache", () => {
  it.effect("keeps a found row for the TTL, by the Clock, and never a miss", () =>
    Effect.gen(function*() {
      const { base, reads } = yield* counted
      const repo = RepoCache.wrap(base, 1000)
      assert.isTrue(Option.isNone(yield* repo.getToken("h1")))
      yield* base.insertToken(token("h1"))
      assert.isTrue(Option.isSome(yield* repo.getToken("h1")), "a miss was kept")
      const before = reads.tokens
      yield* repo.getToken("h1")
      yield* repo.getToken("h1")
      assert.strictEqual(reads.tokens, before, "a kept row was read again")
      yield* TestClock.adjust("1001 millis")
      yield* repo.getToken("h1")
      assert.strictEqual(reads.tokens, before + 1, "a row outlived its TTL")
    }))

  it.effect("is emptied by a write through it, so a revoked token is seen at once", () =>
    Effect.gen(function*() {
      const { base } = yield* counted
      const repo = RepoCache.wrap(base, 60_000)
      yield* base.insertToken(token("h2", "fam_2"))
      assert.isNull(Option.getOrThrow(yield* repo.getToken("h2")).revoked_at)
      yield* repo.revokeFamily("fam_2", 5)
      assert.strictEqual(Option.getOrThrow(yield* repo.getToken("h2")).revoked_at, 5)
    }))

  it.effect("keeps nothing read inside a transaction", () =>
    Effect.gen(function*() {
      const { base, reads } = yield* counted
      const repo = RepoCache.wrap(base, 60_000)
      yield* base.insertToken(token("h3"))
      yield* repo.transaction(repo.getToken("h3"))
      const before = reads.tokens
      yield* repo.getToken("h3")
      assert.strictEqual(reads.tokens, before + 1)
    }))

  it.effect("with a TTL of 0 is the repository itself", () =>
    Effect.gen(function*() {
      const { base } = yield* counted
      assert.strictEqual(RepoCache.wrap(base, 0), base)
    }))
})
