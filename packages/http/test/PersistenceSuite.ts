/**
 * The behaviours every store (`Accounts`, `Tokens`, `LinkTokens`, `ConnectionStore`, `SandboxLog`,
 * `WebhookStore`, `Ciphertexts`, `IdempotencyStore`, `UpstreamBuckets`, `Transactions`) must have on every backend: one
 * suite, run against SQLite (`Persistence.test.ts`) and Postgres (`Persistence.pg.test.ts`).
 *
 * The suite shares one set of stores (one database) between its tests, which run concurrently: every
 * key is prefixed with a per-run id, so that tests cannot see each other's rows, nor the rows of an
 * earlier run against the same Postgres database.
 */
import { assert, layer } from "@effect/vitest"
import { SyncStore } from "@tracebridge/sync"
import { Effect, Either, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import type { Organisation } from "../src/persistence/Accounts.js"
import { Accounts } from "../src/persistence/Accounts.js"
import { Ciphertexts } from "../src/persistence/Ciphertexts.js"
import type { Connection } from "../src/persistence/ConnectionStore.js"
import { ConnectionStore } from "../src/persistence/ConnectionStore.js"
import type { Persistence } from "../src/persistence/Database.js"
import type { IdempotencyKey } from "../src/persistence/IdempotencyStore.js"
import { IdempotencyStore } from "../src/persistence/IdempotencyStore.js"
import type { PublicToken } from "../src/persistence/LinkTokens.js"
import { LinkTokens } from "../src/persistence/LinkTokens.js"
import { SandboxLog } from "../src/persistence/SandboxLog.js"
import type { Token } from "../src/persistence/Tokens.js"
import { Tokens } from "../src/persistence/Tokens.js"
import { Transactions } from "../src/persistence/Transactions.js"
import { UpstreamBuckets } from "../src/persistence/UpstreamBuckets.js"
import type { WebhookDelivery, WebhookEndpoint } from "../src/persistence/WebhookStore.js"
import { WebhookStore } from "../src/persistence/WebhookStore.js"

/** Epoch ms beyond 2^31 (2026-01-01), so a BIGINT that came back as a string would show. */
const T0 = 1_767_225_600_000

/** Long before T0 (still beyond 2^31): the fair-claim test's window. */
const PAST = T0 - 10_000_000_000

export interface SuiteOptions {
  /** Whether `Transactions.transaction` rolls back on failure (both SQL backends do). */
  readonly rollback: boolean
  /**
   * Stores on a database of their own, for the tests whose claims take every due delivery of the
   * database (a claim of a concurrent test would take theirs): built for each such test.
   */
  readonly isolated: Layer.Layer<Persistence, unknown>
}

export const persistenceSuite = (
  name: string,
  persistenceLayer: Layer.Layer<Persistence, unknown>,
  options: SuiteOptions
) =>
  layer(persistenceLayer, { timeout: "60 seconds", excludeTestServices: true })(name, (it) => {
    const run = randomUUID().slice(0, 8)
    const id = (s: string) => `${run}-${s}`

    const organisation = (s: string, overrides: Partial<Organisation> = {}): Organisation => ({
      id: id(s),
      name: `Org ${s}`,
      plan: "sandbox",
      created_at: T0,
      ...overrides
    })

    const token = (s: string, overrides: Partial<Token> = {}): Token => ({
      hash: id(s),
      kind: "refresh",
      organisation_id: id("org"),
      client_id: id("client"),
      connection_id: null,
      family: null,
      scope: "all",
      expires_at: T0 + 3_600_000,
      created_at: T0,
      used_at: null,
      revoked_at: null,
      ...overrides
    })

    const publicToken = (s: string, overrides: Partial<PublicToken> = {}): PublicToken => ({
      hash: id(s),
      organisation_id: id("org"),
      connection_id: id("conn"),
      client_state: null,
      expires_at: T0 + 1_800_000,
      created_at: T0,
      used_at: null,
      ...overrides
    })

    const connection = (s: string, overrides: Partial<Connection> = {}): Connection => ({
      id: id(s),
      organisation_id: id("org"),
      provider: "provider_a",
      state: "CA",
      status: "active",
      is_sandbox: true,
      external_id: null,
      credentials: "Y2lwaGVydGV4dA==",
      key_id: "k1",
      token_issued: false,
      created_at: T0,
      updated_at: T0,
      sandbox_version: 0,
      sandbox_fault: null,
      ...overrides
    })

    it.effect("stores and reads organisations, and lists them", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const a = organisation("org-list-a", { plan: "production", created_at: T0 + 1 })
        const b = organisation("org-list-b")
        yield* accounts.insertOrganisation(a)
        yield* accounts.insertOrganisation(b)
        assert.deepStrictEqual(yield* accounts.getOrganisation(a.id), Option.some(a))
        assert.deepStrictEqual(yield* accounts.getOrganisation(id("nobody")), Option.none())
        const mine = (yield* accounts.listOrganisations()).filter((o) => o.id === a.id || o.id === b.id)
        assert.deepStrictEqual([...mine].sort((x, y) => x.id.localeCompare(y.id)), [a, b])
      }))

    it.effect("sets an organisation's plan, and answers false for an unknown one", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const o = organisation("org-plan")
        yield* accounts.insertOrganisation(o)
        assert.isTrue(yield* accounts.setPlan(o.id, "production"))
        assert.deepStrictEqual(
          yield* accounts.getOrganisation(o.id),
          Option.some({ ...o, plan: "production" as const })
        )
        assert.isTrue(yield* accounts.setPlan(o.id, "sandbox"))
        assert.deepStrictEqual(yield* accounts.getOrganisation(o.id), Option.some(o))
        assert.isFalse(yield* accounts.setPlan(id("org-missing"), "production"))
        assert.deepStrictEqual(yield* accounts.getOrganisation(id("org-missing")), Option.none())
      }))

    it.effect("sets and clears an organisation's allowed redirect origins (issue #28)", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const o = organisation("org-redirects")
        yield* accounts.insertOrganisation(o)
        const origins = ["https://app.example", "http://localhost:3000"]
        assert.isTrue(yield* accounts.setRedirectOrigins(o.id, [...origins, "https://app.example"]))
        assert.deepStrictEqual(yield* accounts.getOrganisation(o.id), Option.some({ ...o, redirect_origins: origins }))
        assert.isTrue(yield* accounts.setRedirectOrigins(o.id, []))
        assert.deepStrictEqual(yield* accounts.getOrganisation(o.id), Option.some(o))
        assert.isFalse(yield* accounts.setRedirectOrigins(id("org-missing"), origins))
        const withOrigins = organisation("org-redirects-insert")
        yield* accounts.insertOrganisation({ ...withOrigins, redirect_origins: ["https://b.example"] })
        assert.deepStrictEqual(
          yield* accounts.getOrganisation(withOrigins.id),
          Option.some({ ...withOrigins, redirect_origins: ["https://b.example"] })
        )
      }))

    it.effect("stores and reads API clients", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const live = {
          id: id("client-a"),
          organisation_id: id("org"),
          secret_hash: "h1",
          created_at: T0,
          revoked_at: null
        }
        const revoked = { ...live, id: id("client-b"), secret_hash: "h2", revoked_at: T0 + 5 }
        yield* accounts.insertClient(live)
        yield* accounts.insertClient(revoked)
        assert.deepStrictEqual(yield* accounts.getClient(live.id), Option.some(live))
        assert.deepStrictEqual(yield* accounts.getClient(revoked.id), Option.some(revoked))
        assert.deepStrictEqual(yield* accounts.getClient(id("client-missing")), Option.none())
      }))

    it.effect("revokes an API client; rotates one, keeping the replaced secret until an expiry (issue 28)", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const tokens = yield* Tokens
        const client = {
          id: id("client-rot"),
          organisation_id: id("org"),
          secret_hash: "h1",
          created_at: T0,
          revoked_at: null
        }
        yield* accounts.insertClient(client)
        assert.isTrue(yield* accounts.rotateClient(client.id, "h2", T0 + 100))
        assert.deepStrictEqual(
          yield* accounts.getClient(client.id),
          Option.some({
            ...client,
            secret_hash: "h2",
            previous_secret_hash: "h1",
            previous_secret_expires_at: T0 + 100
          })
        )
        // a second rotation drops the first secret
        assert.isTrue(yield* accounts.rotateClient(client.id, "h3", T0 + 200))
        assert.deepStrictEqual(
          yield* accounts.getClient(client.id),
          Option.some({
            ...client,
            secret_hash: "h3",
            previous_secret_hash: "h2",
            previous_secret_expires_at: T0 + 200
          })
        )
        const mine = token("tok-rot", { client_id: client.id })
        const other = token("tok-rot-other", { client_id: id("client-other") })
        yield* tokens.insertToken(mine)
        yield* tokens.insertToken(other)
        assert.isTrue(yield* accounts.revokeClient(client.id, T0 + 300))
        // revoked stays at the first revocation; a revoked client is not rotated
        assert.isTrue(yield* accounts.revokeClient(client.id, T0 + 400))
        assert.strictEqual(Option.getOrThrow(yield* accounts.getClient(client.id)).revoked_at, T0 + 300)
        assert.isFalse(yield* accounts.rotateClient(client.id, "h4", T0 + 500))
        assert.isFalse(yield* accounts.revokeClient(id("client-missing"), T0))
        assert.isFalse(yield* accounts.rotateClient(id("client-missing"), "h", T0))
        yield* tokens.revokeClientTokens(client.id, T0 + 300)
        assert.strictEqual(Option.getOrThrow(yield* tokens.getToken(mine.hash)).revoked_at, T0 + 300)
        assert.strictEqual(Option.getOrThrow(yield* tokens.getToken(other.hash)).revoked_at, null)
      }))

    it.effect("stores and reads tokens of every kind, nulls and times intact", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const access = token("tok-access", { kind: "access", family: null })
        const refresh = token("tok-refresh", { family: id("fam"), used_at: T0 + 7, revoked_at: T0 + 8 })
        const conn = token("tok-conn", {
          kind: "connection",
          client_id: null,
          connection_id: id("c"),
          expires_at: null
        })
        for (const t of [access, refresh, conn]) yield* tokens.insertToken(t)
        assert.deepStrictEqual(yield* tokens.getToken(access.hash), Option.some(access))
        assert.deepStrictEqual(yield* tokens.getToken(refresh.hash), Option.some(refresh))
        assert.deepStrictEqual(yield* tokens.getToken(conn.hash), Option.some(conn))
        assert.deepStrictEqual(yield* tokens.getToken(id("tok-missing")), Option.none())
      }))

    it.effect("useToken marks a token used once; a second use answers false", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const t = token("tok-use")
        yield* tokens.insertToken(t)
        assert.isTrue(yield* tokens.useToken(t.hash, T0 + 10))
        assert.deepStrictEqual(yield* tokens.getToken(t.hash), Option.some({ ...t, used_at: T0 + 10 }))
        assert.isFalse(yield* tokens.useToken(t.hash, T0 + 20))
        assert.deepStrictEqual(yield* tokens.getToken(t.hash), Option.some({ ...t, used_at: T0 + 10 }))
        assert.isFalse(yield* tokens.useToken(id("tok-use-missing"), T0))
      }))

    it.effect("useToken is single-use under concurrency: of two parallel uses exactly one wins", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        for (let i = 0; i < 10; i++) {
          const t = token(`tok-race-${i}`)
          yield* tokens.insertToken(t)
          const results = yield* Effect.all([tokens.useToken(t.hash, T0 + 1), tokens.useToken(t.hash, T0 + 2)], {
            concurrency: 2
          })
          assert.strictEqual(results.filter((won) => won).length, 1, `race ${i}: ${results}`)
          const stored = yield* tokens.getToken(t.hash)
          assert.isTrue(Option.isSome(stored) && stored.value.used_at === (results[0] ? T0 + 1 : T0 + 2))
        }
      }))

    it.effect("revokeFamily revokes the live tokens of that family only", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const a = token("fam-a", { family: id("family-1") })
        const b = token("fam-b", { family: id("family-1"), used_at: T0 + 1 })
        const earlier = token("fam-c", { family: id("family-1"), revoked_at: T0 + 2 })
        const other = token("fam-d", { family: id("family-2") })
        const none = token("fam-e", { family: null })
        for (const t of [a, b, earlier, other, none]) yield* tokens.insertToken(t)
        yield* tokens.revokeFamily(id("family-1"), T0 + 100)
        assert.deepStrictEqual(yield* tokens.getToken(a.hash), Option.some({ ...a, revoked_at: T0 + 100 }))
        assert.deepStrictEqual(yield* tokens.getToken(b.hash), Option.some({ ...b, revoked_at: T0 + 100 }))
        assert.deepStrictEqual(yield* tokens.getToken(earlier.hash), Option.some(earlier))
        assert.deepStrictEqual(yield* tokens.getToken(other.hash), Option.some(other))
        assert.deepStrictEqual(yield* tokens.getToken(none.hash), Option.some(none))
      }))

    it.effect("revokeConnectionTokens revokes that connection's live tokens only", () =>
      Effect.gen(function*() {
        const tokens = yield* Tokens
        const a = token("ct-a", { kind: "connection", connection_id: id("ct-conn-1"), expires_at: null })
        const earlier = token("ct-b", { kind: "connection", connection_id: id("ct-conn-1"), revoked_at: T0 + 3 })
        const other = token("ct-c", { kind: "connection", connection_id: id("ct-conn-2") })
        const access = token("ct-d", { kind: "access", connection_id: null })
        for (const t of [a, earlier, other, access]) yield* tokens.insertToken(t)
        yield* tokens.revokeConnectionTokens(id("ct-conn-1"), T0 + 50)
        assert.deepStrictEqual(yield* tokens.getToken(a.hash), Option.some({ ...a, revoked_at: T0 + 50 }))
        assert.deepStrictEqual(yield* tokens.getToken(earlier.hash), Option.some(earlier))
        assert.deepStrictEqual(yield* tokens.getToken(other.hash), Option.some(other))
        assert.deepStrictEqual(yield* tokens.getToken(access.hash), Option.some(access))
      }))

    it.effect("stores and reads link tokens", () =>
      Effect.gen(function*() {
        const linkTokens = yield* LinkTokens
        const full = {
          hash: id("link-a"),
          organisation_id: id("org"),
          environment: "sandbox" as const,
          metadata: JSON.stringify({ client_name: "Acme", nested: { a: [1, 2] } }),
          redirect_uri: "https://example.com/cb",
          state: "st",
          external_id: "ext-1",
          connection_id: id("conn"),
          client_name: "Acme Retail",
          logo_url: "https://acme.example/logo.png",
          expires_at: T0 + 4 * 3_600_000,
          created_at: T0
        }
        const bare = {
          ...full,
          hash: id("link-b"),
          environment: "production" as const,
          metadata: "{}",
          redirect_uri: null,
          state: null,
          external_id: null,
          connection_id: null,
          client_name: null,
          logo_url: null
        }
        yield* linkTokens.insertLinkToken(full)
        yield* linkTokens.insertLinkToken(bare)
        assert.deepStrictEqual(yield* linkTokens.getLinkToken(full.hash), Option.some(full))
        assert.deepStrictEqual(yield* linkTokens.getLinkToken(bare.hash), Option.some(bare))
        assert.deepStrictEqual(yield* linkTokens.getLinkToken(id("link-missing")), Option.none())
      }))

    it.effect("a link token is claimed once under concurrency; a release gives back only its own claim (issue 28)", () =>
      Effect.gen(function*() {
        const linkTokens = yield* LinkTokens
        const t = {
          hash: id("link-claim"),
          organisation_id: id("org"),
          environment: "sandbox" as const,
          metadata: "{}",
          redirect_uri: null,
          state: null,
          external_id: null,
          connection_id: null,
          client_name: null,
          logo_url: null,
          expires_at: T0 + 4 * 3_600_000,
          created_at: T0
        }
        yield* linkTokens.insertLinkToken(t)
        const claims = yield* Effect.all(
          Array.from({ length: 6 }, (_, i) => linkTokens.useLinkToken(t.hash, T0 + i)),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(claims.filter((c) => c).length, 1)
        const at = T0 + claims.indexOf(true)
        // another claim's time releases nothing
        yield* linkTokens.releaseLinkToken(t.hash, at + 1_000)
        assert.isTrue(yield* linkTokens.linkTokenUsed(t.hash))
        yield* linkTokens.releaseLinkToken(t.hash, at)
        assert.isFalse(yield* linkTokens.linkTokenUsed(t.hash))
        assert.isTrue(yield* linkTokens.useLinkToken(t.hash, T0 + 50))
        assert.isFalse(yield* linkTokens.useLinkToken(t.hash, T0 + 60))
      }))

    it.effect("stores and reads public tokens", () =>
      Effect.gen(function*() {
        const linkTokens = yield* LinkTokens
        const a = publicToken("pub-read-a", { client_state: "cs" })
        const b = publicToken("pub-read-b", { used_at: T0 + 1 })
        yield* linkTokens.insertPublicToken(a)
        yield* linkTokens.insertPublicToken(b)
        assert.deepStrictEqual(yield* linkTokens.getPublicToken(a.hash), Option.some(a))
        assert.deepStrictEqual(yield* linkTokens.getPublicToken(b.hash), Option.some(b))
        assert.deepStrictEqual(yield* linkTokens.getPublicToken(id("pub-missing")), Option.none())
      }))

    it.effect("usePublicToken is single-use, also under concurrency", () =>
      Effect.gen(function*() {
        const linkTokens = yield* LinkTokens
        const t = publicToken("pub-use")
        yield* linkTokens.insertPublicToken(t)
        assert.isTrue(yield* linkTokens.usePublicToken(t.hash, T0 + 1))
        assert.isFalse(yield* linkTokens.usePublicToken(t.hash, T0 + 2))
        assert.deepStrictEqual(yield* linkTokens.getPublicToken(t.hash), Option.some({ ...t, used_at: T0 + 1 }))
        assert.isFalse(yield* linkTokens.usePublicToken(id("pub-use-missing"), T0))
        for (let i = 0; i < 10; i++) {
          const r = publicToken(`pub-race-${i}`)
          yield* linkTokens.insertPublicToken(r)
          const results = yield* Effect.all([
            linkTokens.usePublicToken(r.hash, T0),
            linkTokens.usePublicToken(r.hash, T0)
          ], {
            concurrency: 2
          })
          assert.strictEqual(results.filter((won) => won).length, 1, `race ${i}: ${results}`)
        }
      }))

    it.effect("usePublicToken refuses an expired token (expiry at `at` counts as expired) and leaves it unused", () =>
      Effect.gen(function*() {
        const linkTokens = yield* LinkTokens
        const t = publicToken("pub-exp", { expires_at: T0 + 1_000 })
        yield* linkTokens.insertPublicToken(t)
        assert.isFalse(yield* linkTokens.usePublicToken(t.hash, T0 + 1_000))
        assert.isFalse(yield* linkTokens.usePublicToken(t.hash, T0 + 5_000))
        assert.deepStrictEqual(yield* linkTokens.getPublicToken(t.hash), Option.some(t))
        assert.isTrue(yield* linkTokens.usePublicToken(t.hash, T0 + 999))
      }))

    it.effect("stores and reads connections, flags as booleans", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const a = connection("conn-read-a")
        const b = connection("conn-read-b", {
          is_sandbox: false,
          token_issued: true,
          status: "pending",
          external_id: "user-7",
          credentials: null,
          key_id: null
        })
        yield* connectionStore.insertConnection(a)
        yield* connectionStore.insertConnection(b)
        assert.deepStrictEqual(yield* connectionStore.getConnection(a.id), Option.some(a))
        assert.deepStrictEqual(yield* connectionStore.getConnection(b.id), Option.some(b))
        assert.deepStrictEqual(yield* connectionStore.getConnection(id("conn-missing")), Option.none())
      }))

    it.effect("listConnections pages one organisation's connections by created_at, then id, with the total", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const org = id("org-page")
        // Inserted out of order; c2 and c3 share created_at and are ordered by id.
        const c3 = connection("page-c3", { organisation_id: org, created_at: T0 + 20 })
        const c1 = connection("page-c1", { organisation_id: org, created_at: T0 })
        const c5 = connection("page-c5", { organisation_id: org, created_at: T0 + 40 })
        const c2 = connection("page-c2", { organisation_id: org, created_at: T0 + 20 })
        const c4 = connection("page-c4", { organisation_id: org, created_at: T0 + 30 })
        const foreign = connection("page-x", { organisation_id: id("org-page-other"), created_at: T0 + 10 })
        for (const c of [c3, c1, foreign, c5, c2, c4]) yield* connectionStore.insertConnection(c)

        assert.deepStrictEqual(yield* connectionStore.listConnections(org, 0, 100), {
          items: [c1, c2, c3, c4, c5],
          total: 5
        })
        assert.deepStrictEqual(yield* connectionStore.listConnections(org, 0, 2), { items: [c1, c2], total: 5 })
        assert.deepStrictEqual(yield* connectionStore.listConnections(org, 2, 2), { items: [c3, c4], total: 5 })
        assert.deepStrictEqual(yield* connectionStore.listConnections(org, 4, 2), { items: [c5], total: 5 })
        assert.deepStrictEqual(yield* connectionStore.listConnections(org, 10, 2), { items: [], total: 5 })
        assert.deepStrictEqual(yield* connectionStore.listConnections(id("org-page-other"), 0, 10), {
          items: [foreign],
          total: 1
        })
        assert.deepStrictEqual(yield* connectionStore.listConnections(id("org-page-none"), 0, 10), {
          items: [],
          total: 0
        })
      }))

    it.effect("unsyncedProduction: pending or active production connections made before a time, with no facility in the sync", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const sync = yield* SyncStore.SyncStore
        const production = { is_sandbox: false, organisation_id: id("org-unsynced") }
        const pending = connection("unsynced-pending", { ...production, status: "pending", created_at: T0 + 1 })
        const active = connection("unsynced-active", { ...production, status: "active", created_at: T0 + 2 })
        const synced = connection("unsynced-synced", { ...production, status: "pending", created_at: T0 })
        const failed = connection("unsynced-error", { ...production, status: "error", created_at: T0 })
        const gone = connection("unsynced-inactive", { ...production, status: "inactive", created_at: T0 })
        const sandbox = connection("unsynced-sandbox", { organisation_id: id("org-unsynced"), created_at: T0 })
        const recent = connection("unsynced-recent", { ...production, status: "pending", created_at: T0 + 60_000 })
        for (const c of [pending, active, synced, failed, gone, sandbox, recent]) {
          yield* connectionStore.insertConnection(c)
        }
        yield* sync.ensureFacility(synced.id, "fac_1", T0)
        const mine = new Set([pending, active, synced, failed, gone, sandbox, recent].map((c) => c.id))
        const found = (yield* connectionStore.unsyncedProduction(T0 + 1_000, 1_000)).filter((c) => mine.has(c.id))
        assert.deepStrictEqual(found, [pending, active], "oldest first; not synced, error, inactive, sandbox or recent")
        const first = yield* connectionStore.unsyncedProduction(T0 + 1_000, 1)
        assert.strictEqual(first.length, 1)
      }))

    it.effect("updateConnection changes the patched fields only", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const c = connection("conn-upd")
        const untouched = connection("conn-upd-other")
        yield* connectionStore.insertConnection(c)
        yield* connectionStore.insertConnection(untouched)

        yield* connectionStore.updateConnection(c.id, { token_issued: true, updated_at: T0 + 1 })
        const issued = { ...c, token_issued: true, updated_at: T0 + 1 }
        assert.deepStrictEqual(yield* connectionStore.getConnection(c.id), Option.some(issued))

        yield* connectionStore.updateConnection(c.id, {
          status: "inactive",
          credentials: null,
          key_id: null,
          updated_at: T0 + 2
        })
        const erased = { ...issued, status: "inactive" as const, credentials: null, key_id: null, updated_at: T0 + 2 }
        assert.deepStrictEqual(yield* connectionStore.getConnection(c.id), Option.some(erased))

        yield* connectionStore.updateConnection(c.id, { credentials: "bmV3", key_id: "k2", token_issued: false })
        assert.deepStrictEqual(
          yield* connectionStore.getConnection(c.id),
          Option.some({ ...erased, credentials: "bmV3", key_id: "k2", token_issued: false })
        )

        yield* connectionStore.updateConnection(c.id, {})
        yield* connectionStore.updateConnection(id("conn-upd-missing"), { status: "error" })
        assert.deepStrictEqual(yield* connectionStore.getConnection(id("conn-upd-missing")), Option.none())
        assert.deepStrictEqual(yield* connectionStore.getConnection(untouched.id), Option.some(untouched))
      }))

    it.effect("storeLogin writes a login only while the connection is not inactive; eraseInactiveLogin erases an inactive one's (issue 28)", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const c = connection("conn-login", { status: "error" })
        yield* connectionStore.insertConnection(c)
        const login = { credentials: "bmV3", key_id: "k2", status: "active" as const, updated_at: T0 + 1 }
        assert.isTrue(yield* connectionStore.storeLogin(c.id, login))
        assert.deepStrictEqual(yield* connectionStore.getConnection(c.id), Option.some({ ...c, ...login }))
        // an active connection keeps its login
        yield* connectionStore.eraseInactiveLogin(c.id)
        assert.strictEqual(Option.getOrThrow(yield* connectionStore.getConnection(c.id)).credentials, "bmV3")
        yield* connectionStore.updateConnection(c.id, { status: "inactive", updated_at: T0 + 2 })
        assert.isFalse(yield* connectionStore.storeLogin(c.id, { ...login, credentials: "bGF0ZQ==" }))
        const inactive = Option.getOrThrow(yield* connectionStore.getConnection(c.id))
        assert.deepStrictEqual([inactive.status, inactive.credentials], ["inactive", "bmV3"])
        yield* connectionStore.eraseInactiveLogin(c.id)
        const erased = Option.getOrThrow(yield* connectionStore.getConnection(c.id))
        assert.deepStrictEqual([erased.status, erased.credentials, erased.key_id], ["inactive", null, null])
        assert.isFalse(yield* connectionStore.storeLogin(id("conn-login-missing"), login))
      }))

    it.effect("appends sandbox changes only at the expected version, and reads them back from one snapshot", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const sandboxLog = yield* SandboxLog
        const c = connection("sbx-conn")
        const other = connection("sbx-other")
        yield* connectionStore.insertConnection(c)
        yield* connectionStore.insertConnection(other)
        const body = (n: number) => ({ change: JSON.stringify({ _tag: "Scenario", n }), created_at: T0 + n })
        const log = (id: string, after = 0) => Effect.map(sandboxLog.sandboxLog(id, after), Option.getOrThrow)
        assert.deepStrictEqual(yield* log(c.id), { version: 0, fault: null, changes: [] })
        assert.isTrue(yield* sandboxLog.appendSandboxChanges(c.id, 0, [body(1), body(2)]))
        // a writer that built on version 0 too is refused, and writes nothing
        assert.isFalse(yield* sandboxLog.appendSandboxChanges(c.id, 0, [body(9)]))
        assert.isTrue(yield* sandboxLog.appendSandboxChanges(c.id, 2, [body(3)]))
        assert.isTrue(yield* sandboxLog.appendSandboxChanges(c.id, 3, []))
        assert.isTrue(yield* sandboxLog.appendSandboxChanges(other.id, 0, [body(1)]))
        const stored = yield* log(c.id)
        assert.strictEqual(stored.version, 3)
        assert.deepStrictEqual(stored.changes.map((x) => [x.seq, x.change, x.created_at]), [
          [1, body(1).change, T0 + 1],
          [2, body(2).change, T0 + 2],
          [3, body(3).change, T0 + 3]
        ])
        assert.deepStrictEqual((yield* log(c.id, 2)).changes.map((x) => x.seq), [3])
        assert.strictEqual(Option.getOrThrow(yield* connectionStore.getConnection(c.id)).sandbox_version, 3)
        assert.deepStrictEqual(yield* sandboxLog.sandboxLog(id("sbx-none"), 0), Option.none())

        // concurrent appends at one version: exactly one wins
        const raced = yield* Effect.all(
          Array.from({ length: 5 }, (_, i) => sandboxLog.appendSandboxChanges(c.id, 3, [body(10 + i)])),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(raced.filter(Boolean).length, 1)
        assert.strictEqual((yield* log(c.id)).version, 4)

        // a fault is stored with the row; a reset forgets the log and the fault, and raises the version
        yield* sandboxLog.setSandboxFault(c.id, JSON.stringify({ kind: "outage" }))
        assert.strictEqual((yield* log(c.id)).fault, JSON.stringify({ kind: "outage" }))
        yield* sandboxLog.resetSandbox(c.id)
        assert.deepStrictEqual(yield* log(c.id), { version: 5, fault: null, changes: [] })
        assert.isTrue(yield* sandboxLog.appendSandboxChanges(c.id, 5, [body(1)]))
        assert.deepStrictEqual((yield* log(c.id)).changes.map((x) => x.seq), [6])
        // no other connection's log changed
        assert.deepStrictEqual((yield* log(other.id)).changes.map((x) => x.seq), [1])
      }))

    const endpoint = (s: string, overrides: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
      id: id(s),
      organisation_id: id("org-wh"),
      url: "https://example.com/hooks",
      events: JSON.stringify(["lab_result.received"]),
      description: null,
      status: "enabled",
      secret: "c2VjcmV0",
      key_id: "k1",
      previous_secret: null,
      previous_key_id: null,
      previous_expires_at: null,
      created_at: T0,
      updated_at: T0,
      ...overrides
    })

    const delivery = (s: string, overrides: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
      id: id(s),
      organisation_id: id("org-wh"),
      endpoint_id: id("ep"),
      event_id: id("evt"),
      event_type: "lab_result.received",
      status: "pending",
      attempts: 0,
      claims: 0,
      next_attempt_at: T0,
      locked_until: null,
      created_at: T0,
      updated_at: T0,
      ...overrides
    })

    it.effect("stores webhook endpoints: insert, list oldest first, update, delete", () =>
      Effect.gen(function*() {
        const webhookStore = yield* WebhookStore
        const org = id("org-ep")
        const a = endpoint("ep-a", { organisation_id: org, created_at: T0 + 2 })
        const b = endpoint("ep-b", { organisation_id: org, created_at: T0 + 1, description: "second" })
        yield* webhookStore.insertWebhookEndpoint(a)
        yield* webhookStore.insertWebhookEndpoint(b)
        yield* webhookStore.insertWebhookEndpoint(endpoint("ep-other", { organisation_id: id("org-ep-other") }))
        assert.deepStrictEqual(yield* webhookStore.listWebhookEndpoints(org), [b, a])
        const patch = {
          url: "https://example.org/new",
          status: "disabled" as const,
          previous_secret: "b2xk",
          previous_key_id: "k1",
          previous_expires_at: T0 + 86_400_000,
          updated_at: T0 + 5
        }
        yield* webhookStore.updateWebhookEndpoint(a.id, patch)
        assert.deepStrictEqual(yield* webhookStore.getWebhookEndpoint(a.id), Option.some({ ...a, ...patch }))
        yield* webhookStore.updateWebhookEndpoint(a.id, {
          previous_secret: null,
          previous_key_id: null,
          previous_expires_at: null
        })
        assert.deepStrictEqual(
          yield* webhookStore.getWebhookEndpoint(a.id),
          Option.some({ ...a, ...patch, previous_secret: null, previous_key_id: null, previous_expires_at: null })
        )
        yield* webhookStore.deleteWebhookEndpoint(a.id)
        assert.deepStrictEqual(yield* webhookStore.getWebhookEndpoint(a.id), Option.none())
        assert.deepStrictEqual(yield* webhookStore.listWebhookEndpoints(org), [b])
      }))

    it.effect("records an event with its deliveries, and lists an endpoint's deliveries newest first", () =>
      Effect.gen(function*() {
        const webhookStore = yield* WebhookStore
        const ep = id("ep-outbox")
        const event = {
          id: id("evt-outbox"),
          organisation_id: id("org-wh"),
          connection_id: id("conn"),
          type: "transfer.arrived",
          body: JSON.stringify({ id: id("evt-outbox"), type: "transfer.arrived" }),
          created_at: T0,
          trace_parent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        }
        const far = 4_102_444_800_000 // never due in the claim test below
        const d1 = delivery("d-out-1", {
          endpoint_id: ep,
          event_id: event.id,
          next_attempt_at: far,
          created_at: T0 + 1
        })
        const d2 = delivery("d-out-2", {
          endpoint_id: ep,
          event_id: event.id,
          next_attempt_at: far,
          created_at: T0 + 2
        })
        yield* webhookStore.insertWebhookEvent(event, [d1, d2])
        assert.deepStrictEqual(yield* webhookStore.getWebhookEvent(event.id), Option.some(event))
        assert.deepStrictEqual(yield* webhookStore.getWebhookDelivery(d1.id), Option.some(d1))
        assert.deepStrictEqual(yield* webhookStore.listWebhookDeliveries(ep, 0, 10), { items: [d2, d1], total: 2 })
        assert.deepStrictEqual(yield* webhookStore.listWebhookDeliveries(ep, 1, 10), { items: [d1], total: 2 })
        const lone = { ...event, id: id("evt-lone"), trace_parent: null }
        yield* webhookStore.insertWebhookEvent(lone, [])
        assert.deepStrictEqual(yield* webhookStore.getWebhookEvent(lone.id), Option.some(lone))
      }))

    it.effect("claims due deliveries once until the claim lapses, logs each attempt once, redelivers", () =>
      Effect.gen(function*() {
        const webhookStore = yield* WebhookStore
        const ep = endpoint("ep-claim")
        yield* webhookStore.insertWebhookEndpoint(ep)
        const mine = (ds: ReadonlyArray<WebhookDelivery>) => ds.filter((d) => d.endpoint_id === ep.id).map((d) => d.id)
        const event = {
          id: id("evt-claim"),
          organisation_id: ep.organisation_id,
          connection_id: id("conn"),
          type: "lab_result.received",
          body: "{}",
          created_at: T0,
          trace_parent: null
        }
        const due1 = delivery("c-1", { endpoint_id: ep.id, event_id: event.id, next_attempt_at: T0 + 10 })
        const due2 = delivery("c-2", { endpoint_id: ep.id, event_id: event.id, next_attempt_at: T0 + 20 })
        const later = delivery("c-3", { endpoint_id: ep.id, event_id: event.id, next_attempt_at: T0 + 1_000 })
        const done = delivery("c-4", {
          endpoint_id: ep.id,
          event_id: event.id,
          status: "succeeded",
          next_attempt_at: null
        })
        yield* webhookStore.insertWebhookEvent(event, [later, due2, done, due1])
        yield* Effect.gen(function*() {
          const now = T0 + 100
          const one = yield* webhookStore.claimWebhookDeliveries(now, now + 60_000, 1)
          assert.strictEqual(one.length, 1, "the limit holds")
          const rest = yield* webhookStore.claimWebhookDeliveries(now, now + 60_000, 1_000)
          const claimed = [...one, ...rest]
          assert.deepStrictEqual(mine(claimed).sort(), [due1.id, due2.id].sort())
          assert.strictEqual(claimed.find((d) => d.id === due1.id)?.locked_until, now + 60_000)
          assert.deepStrictEqual(mine(yield* webhookStore.claimWebhookDeliveries(now + 1, now + 60_001, 1_000)), [])

          const attempt = { delivery_id: due1.id, n: 1, at: now + 5, status_code: 500, error: null, duration_ms: 12 }
          assert.isTrue(
            yield* webhookStore.recordWebhookAttempt(attempt, { status: "pending", next_attempt_at: now + 60_005 })
          )
          assert.isFalse(
            yield* webhookStore.recordWebhookAttempt(attempt, { status: "pending", next_attempt_at: now + 1 })
          )
          assert.deepStrictEqual(
            yield* webhookStore.getWebhookDelivery(due1.id),
            Option.some({
              ...due1,
              attempts: 1,
              claims: 1,
              next_attempt_at: now + 60_005,
              locked_until: null,
              updated_at: now + 5
            })
          )
          // The claim on due2 lapses; due1 is due again at its next attempt; `later` is due by then.
          const again = yield* webhookStore.claimWebhookDeliveries(now + 60_005, now + 120_005, 1_000)
          assert.deepStrictEqual(
            mine(again),
            [due2.id, later.id, due1.id].sort((a, b) => {
              const at = (x: string) => x === due2.id ? T0 + 20 : x === later.id ? T0 + 1_000 : now + 60_005
              return at(a) - at(b)
            })
          )
          const second = { ...attempt, n: 2, at: now + 60_010, status_code: 200, response_preview: "{\"ok\":true}" }
          assert.isTrue(
            yield* webhookStore.recordWebhookAttempt(second, { status: "succeeded", next_attempt_at: null })
          )
          // an attempt logged without a preview reads back with none (migration 0017's column)
          assert.deepStrictEqual(yield* webhookStore.listWebhookAttempts([due1.id, due2.id]), [
            { ...attempt, response_preview: null },
            second
          ])
          yield* webhookStore.retryWebhookDelivery(due1.id, now + 70_000)
          const retried = Option.getOrThrow(yield* webhookStore.getWebhookDelivery(due1.id))
          assert.deepStrictEqual([retried.status, retried.next_attempt_at, retried.locked_until, retried.attempts], [
            "pending",
            now + 70_000,
            null,
            2
          ])
        }).pipe(Effect.ensuring(webhookStore.deleteWebhookEndpoint(ep.id)))
        assert.deepStrictEqual(yield* webhookStore.getWebhookDelivery(due1.id), Option.none())
        assert.deepStrictEqual(yield* webhookStore.listWebhookAttempts([due1.id]), [])
      }).pipe(Effect.provide(Layer.orDie(options.isolated))))

    it.effect(
      "claims count the attempt, in fair shares per organisation and endpoint; a claim not used is given back",
      () =>
        Effect.gen(function*() {
          const webhookStore = yield* WebhookStore
          const a = endpoint("ep-fair-a", { organisation_id: id("org-fair-a") })
          const b = endpoint("ep-fair-b", { organisation_id: id("org-fair-b") })
          yield* webhookStore.insertWebhookEndpoint(a)
          yield* webhookStore.insertWebhookEndpoint(b)
          const event = {
            id: id("evt-fair"),
            organisation_id: a.organisation_id,
            connection_id: id("conn"),
            type: "lab_result.received",
            body: "{}",
            created_at: T0,
            trace_parent: null
          }
          const flood = [1, 2, 3, 4, 5].map((i) =>
            delivery(`fair-a-${i}`, {
              organisation_id: a.organisation_id,
              endpoint_id: a.id,
              event_id: event.id,
              next_attempt_at: PAST + i
            })
          )
          const late = delivery("fair-b", {
            organisation_id: b.organisation_id,
            endpoint_id: b.id,
            event_id: event.id,
            next_attempt_at: PAST + 50
          })
          yield* webhookStore.insertWebhookEvent(event, [...flood, late])
          yield* Effect.gen(function*() {
            const ours = new Set([...flood, late].map((d) => d.id))
            const mine = (ds: ReadonlyArray<WebhookDelivery>) => ds.filter((d) => ours.has(d.id))
            const now = PAST + 100
            const fair = { perOrganisation: 2, perEndpoint: 2, excludeOrganisations: [], excludeEndpoints: [] }
            // Every organisation's oldest first: the other organisation's one is in a claim of 3.
            const first = mine(yield* webhookStore.claimWebhookDeliveries(now, now + 60_000, 3, fair))
            assert.deepStrictEqual(first.map((d) => d.id).sort(), [flood[0]!.id, flood[1]!.id, late.id].sort())
            assert.deepStrictEqual(first.map((d) => d.claims), [1, 1, 1])
            // An organisation with no room is left out.
            const none = yield* webhookStore.claimWebhookDeliveries(now, now + 60_000, 10, {
              ...fair,
              excludeOrganisations: [a.organisation_id]
            })
            assert.deepStrictEqual(mine(none), [])
            // A claim not used is given back once (compare-and-set), due as it was and uncounted.
            const given = first.find((d) => d.id === flood[0]!.id)!
            assert.isTrue(yield* webhookStore.releaseWebhookClaim(given, PAST + 1))
            assert.isFalse(yield* webhookStore.releaseWebhookClaim(given, PAST + 1))
            const back = Option.getOrThrow(yield* webhookStore.getWebhookDelivery(given.id))
            assert.deepStrictEqual([back.claims, back.locked_until, back.next_attempt_at], [0, null, PAST + 1])
            const again = mine(yield* webhookStore.claimWebhookDeliveries(now, now + 60_000, 10, fair))
            assert.deepStrictEqual(again.map((d) => d.id).sort(), [flood[0]!.id, flood[2]!.id].sort())
          }).pipe(
            Effect.ensuring(
              Effect.zipRight(webhookStore.deleteWebhookEndpoint(a.id), webhookStore.deleteWebhookEndpoint(b.id))
            )
          )
        }).pipe(Effect.provide(Layer.orDie(options.isolated)))
    )

    it.effect("claims a connection's poll once until the claim lapses, also under concurrency (issue #35)", () =>
      Effect.gen(function*() {
        const webhookStore = yield* WebhookStore
        const c = id("conn-poll-claim")
        const first = yield* Effect.all(
          Array.from({ length: 4 }, () => webhookStore.claimPoll(c, T0, T0 + 900_000)),
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual(first.filter(Boolean).length, 1, "one of four concurrent claims wins")
        assert.isFalse(yield* webhookStore.claimPoll(c, T0 + 899_999, T0 + 1_800_000), "in force until it lapses")
        assert.isTrue(yield* webhookStore.claimPoll(c, T0 + 900_000, T0 + 1_800_000), "claimed again once it lapsed")
        assert.isFalse(yield* webhookStore.claimPoll(c, T0 + 900_001, T0 + 1_800_001))
        assert.isTrue(yield* webhookStore.claimPoll(id("conn-poll-claim-other"), T0, T0 + 1), "per connection")
      }))

    it.effect("keeps one poll snapshot per connection, stored compare-and-set on the one a poll started from", () =>
      Effect.gen(function*() {
        const webhookStore = yield* WebhookStore
        const c = id("conn-poll")
        const snap = (a: number, polled_at: number) => ({ connection_id: c, snapshot: `{"a":${a}}`, polled_at })
        assert.deepStrictEqual(yield* webhookStore.getPollSnapshot(c), Option.none())
        // two processes' first polls: one stores its baseline
        const firsts = yield* Effect.all(
          [webhookStore.putPollSnapshot(snap(1, T0), null), webhookStore.putPollSnapshot(snap(9, T0), null)],
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual([...firsts].sort(), [false, true])
        const baseline = Option.getOrThrow(yield* webhookStore.getPollSnapshot(c))
        // two polls that started from it: one stores, the other finds it moved
        const nexts = yield* Effect.all(
          [webhookStore.putPollSnapshot(snap(2, T0 + 1), T0), webhookStore.putPollSnapshot(snap(3, T0 + 2), T0)],
          { concurrency: "unbounded" }
        )
        assert.deepStrictEqual([...nexts].sort(), [false, true])
        const after = Option.getOrThrow(yield* webhookStore.getPollSnapshot(c))
        assert.notStrictEqual(after.polled_at, baseline.polled_at)
        assert.isTrue(after.snapshot === "{\"a\":2}" || after.snapshot === "{\"a\":3}")
        assert.isFalse(yield* webhookStore.putPollSnapshot(snap(4, T0 + 3), T0))
        assert.isTrue(yield* webhookStore.putPollSnapshot(snap(4, T0 + 3), after.polled_at))
        assert.deepStrictEqual(yield* webhookStore.getPollSnapshot(c), Option.some(snap(4, T0 + 3)))
      }))

    it.effect("lists ciphertexts not under a key and replaces them compare-and-set (re-encryption)", () =>
      Effect.gen(function*() {
        const connectionStore = yield* ConnectionStore
        const webhookStore = yield* WebhookStore
        const ciphertexts = yield* Ciphertexts
        const idempotencyStore = yield* IdempotencyStore
        const oldKey = id("key-old")
        const newKey = id("key-new")
        const mine = (rows: ReadonlyArray<{ readonly id: string; readonly column: string }>) =>
          rows.filter((r) => r.id.startsWith(id("rot-"))).map((r) => `${r.column} ${r.id}`).sort()
        yield* connectionStore.insertConnection(connection("rot-c1", { credentials: "b2xk", key_id: oldKey }))
        yield* connectionStore.insertConnection(connection("rot-c2", { credentials: null, key_id: null }))
        yield* connectionStore.insertConnection(connection("rot-c3", { credentials: "bmV3", key_id: newKey }))
        yield* webhookStore.insertWebhookEndpoint(
          endpoint("rot-e1", { secret: "c2Vj", key_id: oldKey, previous_secret: "cHJldg==", previous_key_id: oldKey })
        )
        const scope = id("rot-s1")
        yield* idempotencyStore.claimIdempotencyKey({
          scope,
          idem_key: "k/1",
          fingerprint: "f".repeat(64),
          state: "in_progress",
          response: null,
          key_id: null,
          created_at: T0,
          expires_at: T0 + 86_400_000
        })
        yield* idempotencyStore.completeIdempotencyKey(scope, "k/1", "cmVzcA==", oldKey)
        const rows = yield* ciphertexts.listCiphertexts(newKey)
        assert.deepStrictEqual(mine(rows), [
          `connection.credentials ${id("rot-c1")}`,
          `idempotency.response ${scope}/k/1`,
          `webhook.previous_secret ${id("rot-e1")}`,
          `webhook.secret ${id("rot-e1")}`
        ])
        const c1 = rows.find((r) => r.id === id("rot-c1"))!
        assert.deepStrictEqual([c1.ciphertext, c1.key_id], ["b2xk", oldKey])
        for (const r of rows.filter((r) => r.id.startsWith(id("rot-")))) {
          assert.isTrue(yield* ciphertexts.replaceCiphertext(r, `${r.column}-new`, newKey))
          // a second replace from the same stale read loses the compare-and-set
          assert.isFalse(yield* ciphertexts.replaceCiphertext(r, "stale", newKey))
        }
        assert.deepStrictEqual(mine(yield* ciphertexts.listCiphertexts(newKey)), [])
        const c = Option.getOrThrow(yield* connectionStore.getConnection(id("rot-c1")))
        assert.deepStrictEqual([c.credentials, c.key_id], ["connection.credentials-new", newKey])
        const e = Option.getOrThrow(yield* webhookStore.getWebhookEndpoint(id("rot-e1")))
        assert.deepStrictEqual([e.secret, e.key_id, e.previous_secret, e.previous_key_id], [
          "webhook.secret-new",
          newKey,
          "webhook.previous_secret-new",
          newKey
        ])
        const k = Option.getOrThrow(yield* idempotencyStore.getIdempotencyKey(scope, "k/1", T0))
        assert.deepStrictEqual([k.response, k.key_id], ["idempotency.response-new", newKey])
      }))

    it.effect("transaction commits its writes and returns the result", () =>
      Effect.gen(function*() {
        const accounts = yield* Accounts
        const connectionStore = yield* ConnectionStore
        const transactions = yield* Transactions
        const o = organisation("tx-commit")
        const c = connection("tx-commit-conn", { organisation_id: o.id })
        const result = yield* transactions.transaction(
          Effect.gen(function*() {
            yield* accounts.insertOrganisation(o)
            yield* connectionStore.insertConnection(c)
            return yield* connectionStore.getConnection(c.id)
          })
        )
        assert.deepStrictEqual(result, Option.some(c))
        assert.deepStrictEqual(yield* accounts.getOrganisation(o.id), Option.some(o))
        assert.deepStrictEqual(yield* connectionStore.getConnection(c.id), Option.some(c))
      }))

    it.effect("transaction passes the caller's failure through unchanged", () =>
      Effect.gen(function*() {
        const transactions = yield* Transactions
        const result = yield* Effect.either(
          transactions.transaction(Effect.fail({ _tag: "Refused" as const, why: "nope" }))
        )
        assert.deepStrictEqual(result, Either.left({ _tag: "Refused" as const, why: "nope" }))
      }))

    const idem = (s: string, overrides: Partial<IdempotencyKey> = {}): IdempotencyKey => ({
      scope: id("idem-org"),
      idem_key: id(s),
      fingerprint: "f1",
      state: "in_progress",
      response: null,
      key_id: null,
      created_at: T0,
      expires_at: T0 + 86_400_000,
      ...overrides
    })

    it.effect("an idempotency key is claimed once; a second claim loses until it is released", () =>
      Effect.gen(function*() {
        const idempotencyStore = yield* IdempotencyStore
        const k = idem("claim")
        assert.isTrue(yield* idempotencyStore.claimIdempotencyKey(k))
        assert.isFalse(yield* idempotencyStore.claimIdempotencyKey({ ...k, fingerprint: "f2" }))
        assert.deepStrictEqual(yield* idempotencyStore.getIdempotencyKey(k.scope, k.idem_key, T0), Option.some(k))
        // the same key in another scope is another key
        assert.isTrue(yield* idempotencyStore.claimIdempotencyKey({ ...k, scope: id("idem-other") }))
        yield* idempotencyStore.releaseIdempotencyKey(k.scope, k.idem_key)
        assert.deepStrictEqual(yield* idempotencyStore.getIdempotencyKey(k.scope, k.idem_key, T0), Option.none())
        assert.isTrue(yield* idempotencyStore.claimIdempotencyKey(k))
      }))

    it.effect("concurrent claims of one idempotency key: exactly one wins", () =>
      Effect.gen(function*() {
        const idempotencyStore = yield* IdempotencyStore
        const k = idem("race")
        const results = yield* Effect.all(Array.from({ length: 8 }, () => idempotencyStore.claimIdempotencyKey(k)), {
          concurrency: "unbounded"
        })
        assert.strictEqual(results.filter((r) => r).length, 1)
      }))

    it.effect("a completed idempotency key keeps its response; release no longer drops it", () =>
      Effect.gen(function*() {
        const idempotencyStore = yield* IdempotencyStore
        const k = idem("complete")
        assert.isTrue(yield* idempotencyStore.claimIdempotencyKey(k))
        yield* idempotencyStore.completeIdempotencyKey(k.scope, k.idem_key, "ciphertext", "kid")
        yield* idempotencyStore.releaseIdempotencyKey(k.scope, k.idem_key)
        assert.deepStrictEqual(
          yield* idempotencyStore.getIdempotencyKey(k.scope, k.idem_key, T0 + 1),
          Option.some({ ...k, state: "completed" as const, response: "ciphertext", key_id: "kid" })
        )
      }))

    it.effect("an idempotency key expires: invisible after expires_at, and a new claim replaces it", () =>
      Effect.gen(function*() {
        const idempotencyStore = yield* IdempotencyStore
        // Claims sweep every expired row, whatever its scope: this key lives and dies a week before the
        // other tests' keys, so that its sweep cannot remove theirs while they run concurrently.
        const k = idem("expire", { created_at: T0 - 7 * 86_400_000, expires_at: T0 - 6 * 86_400_000 })
        assert.isTrue(yield* idempotencyStore.claimIdempotencyKey(k))
        yield* idempotencyStore.completeIdempotencyKey(k.scope, k.idem_key, "old", "kid")
        assert.deepStrictEqual(
          yield* idempotencyStore.getIdempotencyKey(k.scope, k.idem_key, k.expires_at),
          Option.none()
        )
        const later = { ...k, created_at: k.expires_at, expires_at: k.expires_at + 86_400_000 }
        assert.isTrue(yield* idempotencyStore.claimIdempotencyKey(later))
        assert.deepStrictEqual(
          yield* idempotencyStore.getIdempotencyKey(k.scope, k.idem_key, later.created_at),
          Option.some(later)
        )
      }))

    it.effect("upstream buckets: reservations are spaced at the rate, refill, and never hand out a token twice", () =>
      Effect.gen(function*() {
        const buckets = yield* UpstreamBuckets
        const key = id("upstream|spaced")
        const rate = { rate: 10, burst: 1 }
        const waits = yield* Effect.all(Array.from({ length: 20 }, () => buckets.reserve(key, rate, T0)), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(
          waits.slice().sort((a, b) => a - b).map(Math.round),
          Array.from({ length: 20 }, (_, i) => i * 100)
        )
        // 20 tokens reserved ahead: at T0 + 2 s the bucket is even again, at T0 + 3 s full (1 token)
        assert.strictEqual(Math.round(yield* buckets.reserve(key, rate, T0 + 2_000)), 0)
        assert.strictEqual(Math.round(yield* buckets.reserve(key, rate, T0 + 2_000)), 100)
        assert.strictEqual(Math.round(yield* buckets.reserve(key, rate, T0 + 3_000)), 0)
        // a bucket of 3 lets 3 go at once
        const burst = id("upstream|burst")
        const three = yield* Effect.forEach([1, 2, 3, 4], () => buckets.reserve(burst, { rate: 2, burst: 3 }, T0))
        assert.deepStrictEqual(three.map(Math.round), [0, 0, 0, 500])
      }))

    it.effect("upstream buckets: a pause holds the bucket until it ends; a shorter one never cuts it", () =>
      Effect.gen(function*() {
        const buckets = yield* UpstreamBuckets
        const key = id("upstream|paused")
        const rate = { rate: 10, burst: 1 }
        assert.strictEqual(yield* buckets.reserve(key, rate, T0), 0)
        yield* buckets.pauseUntil(key, T0 + 5_000, T0 + 10)
        yield* buckets.pauseUntil(key, T0 + 2_000, T0 + 20)
        assert.strictEqual(Math.round(yield* buckets.reserve(key, rate, T0 + 1_000)), 4_000)
        assert.strictEqual(Math.round(yield* buckets.reserve(key, rate, T0 + 1_000)), 4_100)
        // a pause of a key never reserved before
        const fresh = id("upstream|fresh")
        yield* buckets.pauseUntil(fresh, T0 + 3_000, T0)
        assert.strictEqual(Math.round(yield* buckets.reserve(fresh, rate, T0)), 3_000)
        // another key is not paused
        assert.strictEqual(yield* buckets.reserve(id("upstream|other"), rate, T0 + 1_000), 0)
      }))

    it.effect("upstream buckets: only full buckets are dropped", () =>
      Effect.gen(function*() {
        const buckets = yield* UpstreamBuckets
        const key = id("upstream|drop")
        const rate = { rate: 10, burst: 1 }
        // Drops sweep every full bucket, whatever its key: this one lives a week before the other
        // tests' buckets, so that its sweeps cannot drop theirs while they run concurrently.
        const t = T0 - 7 * 86_400_000
        yield* Effect.forEach([1, 2, 3], () => buckets.reserve(key, rate, t))
        // full at t + 300 only
        yield* buckets.dropFullBuckets(t + 250)
        assert.strictEqual(Math.round(yield* buckets.reserve(key, rate, t)), 300, "kept: tokens reserved ahead")
        yield* buckets.dropFullBuckets(t + 500)
        assert.strictEqual(yield* buckets.reserve(key, rate, t), 0, "dropped: a missing bucket is full")
      }))

    /** Page `n` of five packages of facility `fac_1` of connection `c`. */
    const syncPage = (store: SyncStore.Service, c: string, n: number) =>
      store.apply({
        connection_id: c,
        facility_id: "fac_1",
        resource: "packages",
        generation: 0,
        objects: Array.from({ length: 5 }, (_, i) => ({ object_id: `p${n}-${i}`, body: `{"id":"p${n}-${i}"}` })),
        cursor: {},
        now: T0
      })

    it.effect("sync store: writers in parallel get ordered, unique sequences; a repeat adds no change", () =>
      Effect.gen(function*() {
        const store = yield* SyncStore.SyncStore
        const c = id("sync-conn")
        yield* store.ensureFacility(c, "fac_1", T0)
        const page = (n: number) => syncPage(store, c, n)
        const counts = yield* Effect.all(Array.from({ length: 8 }, (_, n) => page(n)), { concurrency: 8 })
        assert.deepStrictEqual(counts, Array.from({ length: 8 }, () => 5))
        assert.strictEqual(yield* page(3), 0, "the same page again adds nothing")
        const feed = yield* store.feed(c, "fac_1", 0, 100, [])
        assert.deepStrictEqual(feed.map((x) => x.seq), Array.from({ length: 40 }, (_, i) => i + 1))
        assert.strictEqual(new Set(feed.map((x) => x.object_id)).size, 40)
      }))

    it.effect("sync store: the same pages written by two runners at once take one sequence each (a taken-over backfill)", () =>
      Effect.gen(function*() {
        const store = yield* SyncStore.SyncStore
        const c = id("sync-twice")
        yield* store.ensureFacility(c, "fac_1", T0)
        const page = (n: number) => syncPage(store, c, n)
        // two runners of one backfill store the same six pages, each page at the same moment
        const counts = yield* Effect.all(
          Array.from({ length: 12 }, (_, k) => page(k % 6)),
          { concurrency: 12 }
        )
        assert.strictEqual(counts.reduce((a, b) => a + b, 0), 30, "each object stored once")
        const feed = yield* store.feed(c, "fac_1", 0, 100, [])
        assert.deepStrictEqual(feed.map((x) => x.seq), Array.from({ length: 30 }, (_, i) => i + 1), "no sequence lost")
      }))

    it.effect("sync store: a poll's empty page moves the cursor only, and a missing resource row is made", () =>
      Effect.gen(function*() {
        const store = yield* SyncStore.SyncStore
        const c = id("sync-empty")
        yield* store.ensureFacility(c, "fac_1", T0)
        assert.strictEqual(yield* syncPage(store, c, 0), 5)
        const empty = (resource: string, at: number) =>
          store.apply({
            connection_id: c,
            facility_id: "fac_1",
            resource,
            generation: 0,
            objects: [],
            cursor: { status: "live", synced_through: at, last_synced_at: at, last_error: null },
            now: at
          })
        assert.strictEqual(yield* empty("packages", T0 + 30_000), 0)
        assert.strictEqual(yield* empty("plants", T0 + 30_000), 0)
        const rows = yield* store.resources(c, "fac_1")
        assert.deepStrictEqual(
          rows.map((r) => [r.resource, r.status, r.synced_through, r.last_synced_at, r.count]),
          [["packages", "live", T0 + 30_000, T0 + 30_000, 5], ["plants", "live", T0 + 30_000, T0 + 30_000, 0]]
        )
        assert.strictEqual((yield* store.feed(c, "fac_1", 0, 100, [])).length, 5)
        yield* store.dropConnection(c)
      }))

    it.effect("sync store: nodes claiming due polls at once get different facilities, each once", () =>
      Effect.gen(function*() {
        const store = yield* SyncStore.SyncStore
        const c = id("sync-due")
        for (let i = 0; i < 12; i++) {
          yield* store.ensureFacility(c, `fac_${i}`, T0)
          yield* store.updateFacility(c, `fac_${i}`, { status: "live", next_poll_at: T0 })
        }
        const claims = yield* Effect.all(
          Array.from({ length: 4 }, () => store.claimDue(T0 + 1, 300_000, 3)),
          { concurrency: 4 }
        )
        const mine = claims.flat().filter((f) => f.connection_id === c).map((f) => f.facility_id)
        assert.strictEqual(new Set(mine).size, mine.length, "no facility claimed twice")
        assert.isAtMost(mine.length, 12)
        const again = (yield* store.claimDue(T0 + 1, 300_000, 100)).filter((f) => f.connection_id === c)
        assert.strictEqual(mine.length + again.length, 12, "every due facility claimed once in all")
        yield* store.dropConnection(c)
        assert.deepStrictEqual(yield* store.facilities(c), [])
      }))

    it.effect("sync store: dropping one facility forgets its rows and objects, and no other's (issue #28)", () =>
      Effect.gen(function*() {
        const store = yield* SyncStore.SyncStore
        const c = id("sync-drop")
        for (const f of ["fac_kept", "fac_madeup"]) {
          yield* store.ensureFacility(c, f, T0)
          yield* store.apply({
            connection_id: c,
            facility_id: f,
            resource: "packages",
            generation: 0,
            objects: [{ object_id: `pkg_${f}`, body: "{}" }],
            now: T0,
            cursor: {}
          })
        }
        yield* store.dropFacility(c, "fac_madeup")
        assert.deepStrictEqual((yield* store.facilities(c)).map((f) => f.facility_id), ["fac_kept"])
        assert.deepStrictEqual(yield* store.resources(c, "fac_madeup"), [])
        assert.deepStrictEqual(yield* store.feed(c, "fac_madeup", 0, 10, []), [])
        assert.strictEqual((yield* store.feed(c, "fac_kept", 0, 10, [])).length, 1)
        yield* store.dropConnection(c)
      }))

    // Only backends whose transactions roll back register this case (both SQL backends do).
    if (options.rollback) {
      it.effect("transaction rolls back every write when it fails", () =>
        Effect.gen(function*() {
          const accounts = yield* Accounts
          const tokens = yield* Tokens
          const transactions = yield* Transactions
          const o = organisation("tx-rollback")
          const t = token("tx-rollback-tok")
          yield* tokens.insertToken(t)
          const result = yield* Effect.either(transactions.transaction(
            Effect.gen(function*() {
              yield* accounts.insertOrganisation(o)
              assert.isTrue(yield* tokens.useToken(t.hash, T0 + 1))
              assert.deepStrictEqual(yield* accounts.getOrganisation(o.id), Option.some(o))
              return yield* Effect.fail("refused" as const)
            })
          ))
          assert.deepStrictEqual(result, Either.left("refused" as const))
          assert.deepStrictEqual(yield* accounts.getOrganisation(o.id), Option.none())
          assert.deepStrictEqual(yield* tokens.getToken(t.hash), Option.some(t))
        }))
    }
  })
