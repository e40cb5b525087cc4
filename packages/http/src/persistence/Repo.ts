/**
 * What the service stores, as one repository port: organisations, API clients, tokens, link and
 * public tokens, connections, each sandbox connection's change log, and webhooks (endpoints, the
 * event outbox, deliveries and their attempts, the poller's snapshots), claimed idempotency keys
 * and the shared rate-limit buckets. Secrets never reach it in
 * plain text: tokens and client secrets arrive as hashes, provider logins encrypted.
 *
 * One implementation, `RepoSql` (`@effect/sql`: SQLite through libsql by default, Postgres when
 * `DATABASE_URL` is set), which passes `test/RepoSuite.ts` on both. The tests run on it too
 * (SQLite in a temporary file): there is no in-memory stand-in.
 *
 * @since 0.1.0
 */
import { Context, Schema } from "effect"
import type { Effect, Option } from "effect"

/** @since 0.1.0 @category models */
export const Plan = Schema.Literal("sandbox", "production")
/** @since 0.1.0 @category models */
export type Plan = typeof Plan.Type

/** @since 0.1.0 @category models */
export interface Organisation {
  readonly id: string
  readonly name: string
  readonly plan: Plan
  readonly created_at: number
}

/** @since 0.1.0 @category models */
export interface ApiClient {
  readonly id: string
  readonly organisation_id: string
  readonly secret_hash: string
  readonly created_at: number
  readonly revoked_at: number | null
}

/** @since 0.1.0 @category models */
export type TokenKind = "access" | "refresh" | "connection"

/** @since 0.1.0 @category models */
export interface Token {
  readonly hash: string
  readonly kind: TokenKind
  readonly organisation_id: string
  readonly client_id: string | null
  readonly connection_id: string | null
  /** Refresh tokens of one chain share a family; reuse of a spent one revokes the family. */
  readonly family: string | null
  readonly scope: string
  readonly expires_at: number | null
  readonly created_at: number
  readonly used_at: number | null
  readonly revoked_at: number | null
}

/** @since 0.1.0 @category models */
export interface LinkToken {
  readonly hash: string
  readonly organisation_id: string
  readonly environment: "sandbox" | "production"
  /** JSON text of the link token request's metadata. */
  readonly metadata: string
  readonly redirect_uri: string | null
  readonly state: string | null
  readonly external_id: string | null
  /** Update mode: the connection whose login is re-entered. */
  readonly connection_id: string | null
  readonly expires_at: number
  readonly created_at: number
}

/** @since 0.1.0 @category models */
export interface PublicToken {
  readonly hash: string
  readonly organisation_id: string
  readonly connection_id: string
  readonly client_state: string | null
  readonly expires_at: number
  readonly created_at: number
  readonly used_at: number | null
}

/** @since 0.1.0 @category models */
export interface Connection {
  readonly id: string
  readonly organisation_id: string
  readonly provider: string
  readonly state: string
  readonly status: "active" | "inactive" | "error" | "pending"
  readonly is_sandbox: boolean
  readonly external_id: string | null
  /** AES-256-GCM ciphertext of the provider login (base64), or null once erased. */
  readonly credentials: string | null
  readonly key_id: string | null
  /** Whether the connection token has been handed out (it is shown once). */
  readonly token_issued: boolean
  readonly created_at: number
  readonly updated_at: number
  /**
   * A sandbox connection's version: raised by every change appended to its log and by every
   * reset, never lowered. A process's in-memory world is current while it holds this version.
   */
  readonly sandbox_version: number
  /** JSON text of the sandbox connection's upstream fault (`Faults.Fault`), or null. */
  readonly sandbox_fault: string | null
}

/** @since 0.1.0 @category models */
export interface SandboxChange {
  readonly connection_id: string
  /** The connection's `sandbox_version` once this change was appended (1, 2, … after each reset's). */
  readonly seq: number
  /** JSON text of the change (a sandbox `Change` without functions). */
  readonly change: string
  readonly created_at: number
}

/**
 * A sandbox connection's stored state, read in one statement (one snapshot): its version, its
 * fault, and the changes of its log after a given sequence.
 *
 * @since 0.1.0
 * @category models
 */
export interface SandboxLog {
  readonly version: number
  readonly fault: string | null
  /** The changes with `after < seq <= version`, in order. */
  readonly changes: ReadonlyArray<SandboxChange>
}

/** @since 0.1.0 @category models */
export interface WebhookEndpoint {
  readonly id: string
  readonly organisation_id: string
  readonly url: string
  /** JSON text of the event names. */
  readonly events: string
  readonly description: string | null
  readonly status: "enabled" | "disabled"
  /** AES-256-GCM ciphertext of the signing secret (it must be recoverable to sign). */
  readonly secret: string
  readonly key_id: string
  /** The secret before the last rotation, signing until `previous_expires_at`. */
  readonly previous_secret: string | null
  readonly previous_key_id: string | null
  readonly previous_expires_at: number | null
  readonly created_at: number
  readonly updated_at: number
}

/** @since 0.1.0 @category models */
export interface WebhookEventRow {
  readonly id: string
  readonly organisation_id: string
  readonly connection_id: string
  readonly type: string
  /** The delivery body, exactly the bytes every attempt signs and sends. */
  readonly body: string
  readonly created_at: number
}

/** @since 0.1.0 @category models */
export type DeliveryStatus = "pending" | "succeeded" | "failed"

/** @since 0.1.0 @category models */
export interface WebhookDelivery {
  readonly id: string
  readonly organisation_id: string
  readonly endpoint_id: string
  readonly event_id: string
  readonly event_type: string
  readonly status: DeliveryStatus
  readonly attempts: number
  /** When the next attempt is due (null once succeeded or failed). */
  readonly next_attempt_at: number | null
  /** A worker's claim: no other worker takes the delivery before this time. */
  readonly locked_until: number | null
  readonly created_at: number
  readonly updated_at: number
}

/** @since 0.1.0 @category models */
export interface WebhookAttempt {
  readonly delivery_id: string
  /** 1 for the first attempt. */
  readonly n: number
  readonly at: number
  readonly status_code: number | null
  readonly error: string | null
  readonly duration_ms: number
}

/** @since 0.1.0 @category models */
export interface PollSnapshot {
  readonly connection_id: string
  /** JSON text of what the poller saw last. */
  readonly snapshot: string
  readonly polled_at: number
}

/**
 * Where a ciphertext is stored: a connection's provider login, or a webhook endpoint's signing
 * secret or its previous secret.
 *
 * @since 0.1.0
 * @category models
 */
export type CiphertextColumn =
  | "connection.credentials"
  | "webhook.secret"
  | "webhook.previous_secret"
  | "idempotency.response"

/**
 * One stored ciphertext with the id of the key it is under (for re-encryption).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredCiphertext {
  readonly column: CiphertextColumn
  /** The connection's or endpoint's id; for a stored idempotent response, `{scope}/{idem_key}`. */
  readonly id: string
  readonly ciphertext: string
  /** Empty when the row has no key id (it cannot be decrypted). */
  readonly key_id: string
}

/**
 * The `StoredCiphertext.id` of a stored idempotent response: `{scope}/{idem_key}` (scopes are
 * organisation ids, which hold no `/`), and its two parts back.
 *
 * @since 0.1.0
 * @category models
 */
export const idempotencyRowId = {
  make: (scope: string, key: string): string => `${scope}/${key}`,
  scope: (id: string): string => id.slice(0, Math.max(0, id.indexOf("/"))),
  key: (id: string): string => id.slice(id.indexOf("/") + 1)
}

/**
 * One claimed `Idempotency-Key` (scoped per organisation). `in_progress` while the first request
 * runs; `completed` with its response (encrypted: `response` is a ciphertext under `key_id`).
 *
 * @since 0.1.0
 * @category models
 */
export interface IdempotencyKey {
  readonly scope: string
  readonly idem_key: string
  /** SHA-256 (hex) of method, path and body. */
  readonly fingerprint: string
  readonly state: "in_progress" | "completed"
  readonly response: string | null
  readonly key_id: string | null
  readonly created_at: number
  readonly expires_at: number
}

/**
 * How a rate-limit bucket behaves and when the caller is (`now`, epoch ms from Effect's `Clock`,
 * never the database's clock).
 *
 * @since 0.1.0
 * @category models
 */
export interface RateBucket {
  /** Tokens added per second. */
  readonly rate: number
  /** The bucket size (a new bucket starts full). */
  readonly burst: number
  readonly now: number
}

/**
 * The outcome of `takeRateToken`.
 *
 * @since 0.1.0
 * @category models
 */
export interface RateTake {
  /** Whether a token was taken (the refilled bucket held at least one). */
  readonly allowed: boolean
  /** Tokens left in the bucket after this call (after taking one, when allowed). */
  readonly tokens: number
}

/**
 * The repository. Every method is atomic on its own; `transaction` runs several as one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly insertOrganisation: (o: Organisation) => Effect.Effect<void>
  readonly getOrganisation: (id: string) => Effect.Effect<Option.Option<Organisation>>
  readonly listOrganisations: () => Effect.Effect<ReadonlyArray<Organisation>>
  readonly setPlan: (id: string, plan: Plan) => Effect.Effect<boolean>

  readonly insertClient: (c: ApiClient) => Effect.Effect<void>
  readonly getClient: (id: string) => Effect.Effect<Option.Option<ApiClient>>

  readonly insertToken: (t: Token) => Effect.Effect<void>
  readonly getToken: (hash: string) => Effect.Effect<Option.Option<Token>>
  /** Marks a refresh token used, only if it was unused; false when it was already used (reuse). */
  readonly useToken: (hash: string, at: number) => Effect.Effect<boolean>
  readonly revokeFamily: (family: string, at: number) => Effect.Effect<void>
  readonly revokeConnectionTokens: (connectionId: string, at: number) => Effect.Effect<void>

  readonly insertLinkToken: (t: LinkToken) => Effect.Effect<void>
  readonly getLinkToken: (hash: string) => Effect.Effect<Option.Option<LinkToken>>

  /** Whether a link token has produced a public token already (each is single use). */
  readonly linkTokenUsed: (hash: string) => Effect.Effect<boolean>
  /** Marks a link token used; false when it already was. */
  readonly useLinkToken: (hash: string, at: number) => Effect.Effect<boolean>

  readonly insertPublicToken: (t: PublicToken) => Effect.Effect<void>
  readonly getPublicToken: (hash: string) => Effect.Effect<Option.Option<PublicToken>>
  /** Marks a public token used, only if unused and not expired at `at`; false otherwise. */
  readonly usePublicToken: (hash: string, at: number) => Effect.Effect<boolean>

  readonly insertConnection: (c: Connection) => Effect.Effect<void>
  readonly getConnection: (id: string) => Effect.Effect<Option.Option<Connection>>
  /** One organisation's connections, oldest first, with the total. */
  readonly listConnections: (
    organisationId: string,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<Connection>; readonly total: number }>
  readonly updateConnection: (
    id: string,
    patch: Partial<Pick<Connection, "status" | "credentials" | "key_id" | "token_issued" | "updated_at">>
  ) => Effect.Effect<void>

  /** A sandbox connection's version, fault and the changes after `after`; none for an unknown connection. */
  readonly sandboxLog: (connectionId: string, after: number) => Effect.Effect<Option.Option<SandboxLog>>
  /**
   * Appends changes to a sandbox connection's log if its version is still `expected` (optimistic
   * concurrency): the version becomes `expected + changes.length` and the changes get the
   * sequences in between, atomically. False, with nothing written, when another write got there
   * first.
   */
  readonly appendSandboxChanges: (
    connectionId: string,
    expected: number,
    changes: ReadonlyArray<{ readonly change: string; readonly created_at: number }>
  ) => Effect.Effect<boolean>
  /** Sets (JSON text) or clears (null) a sandbox connection's upstream fault. */
  readonly setSandboxFault: (connectionId: string, fault: string | null) => Effect.Effect<void>
  /**
   * Resets a sandbox connection: forgets its change log and its fault and raises its version, so
   * that every process regenerates its world from the seed on its next request.
   */
  readonly resetSandbox: (connectionId: string) => Effect.Effect<void>

  readonly insertWebhookEndpoint: (e: WebhookEndpoint) => Effect.Effect<void>
  readonly getWebhookEndpoint: (id: string) => Effect.Effect<Option.Option<WebhookEndpoint>>
  /** One organisation's endpoints, oldest first. */
  readonly listWebhookEndpoints: (organisationId: string) => Effect.Effect<ReadonlyArray<WebhookEndpoint>>
  readonly updateWebhookEndpoint: (
    id: string,
    patch: Partial<
      Pick<
        WebhookEndpoint,
        | "url"
        | "events"
        | "description"
        | "status"
        | "secret"
        | "key_id"
        | "previous_secret"
        | "previous_key_id"
        | "previous_expires_at"
        | "updated_at"
      >
    >
  ) => Effect.Effect<void>
  /** Deletes an endpoint with its deliveries and their attempts. */
  readonly deleteWebhookEndpoint: (id: string) => Effect.Effect<void>

  /** Records an event and its deliveries (the outbox), atomically. */
  readonly insertWebhookEvent: (
    event: WebhookEventRow,
    deliveries: ReadonlyArray<WebhookDelivery>
  ) => Effect.Effect<void>
  readonly getWebhookEvent: (id: string) => Effect.Effect<Option.Option<WebhookEventRow>>
  readonly getWebhookDelivery: (id: string) => Effect.Effect<Option.Option<WebhookDelivery>>
  /** An endpoint's deliveries, newest first, with the total. */
  readonly listWebhookDeliveries: (
    endpointId: string,
    offset: number,
    limit: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WebhookDelivery>; readonly total: number }>
  /** The attempts of some deliveries, in order. */
  readonly listWebhookAttempts: (deliveryIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<WebhookAttempt>>
  /**
   * Claims up to `limit` pending deliveries due at `now` that no live claim holds, holding them
   * until `lockedUntil`. Two concurrent claims never return the same delivery (Postgres:
   * `FOR UPDATE SKIP LOCKED`; SQLite: one writer at a time).
   */
  readonly claimWebhookDeliveries: (
    now: number,
    lockedUntil: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<WebhookDelivery>>
  /**
   * Logs attempt `attempt.n` and moves the delivery on, only if it still has `attempt.n - 1`
   * attempts (so an attempt is never recorded twice); false otherwise.
   */
  readonly recordWebhookAttempt: (
    attempt: WebhookAttempt,
    next: { readonly status: DeliveryStatus; readonly next_attempt_at: number | null }
  ) => Effect.Effect<boolean>
  /** Makes a delivery due now again (redelivery), whatever its status. */
  readonly retryWebhookDelivery: (id: string, now: number) => Effect.Effect<void>

  readonly getPollSnapshot: (connectionId: string) => Effect.Effect<Option.Option<PollSnapshot>>
  readonly putPollSnapshot: (s: PollSnapshot) => Effect.Effect<void>

  /**
   * Every stored ciphertext not under `keyId`: connection logins, webhook secrets and previous
   * secrets, and the responses of completed idempotency keys.
   */
  readonly listCiphertexts: (exceptKeyId: string) => Effect.Effect<ReadonlyArray<StoredCiphertext>>
  /**
   * Replaces one ciphertext and its key id, only if the row still holds `old.ciphertext`
   * (compare-and-set); false otherwise.
   */
  readonly replaceCiphertext: (old: StoredCiphertext, ciphertext: string, keyId: string) => Effect.Effect<boolean>

  /**
   * Claims a key: drops expired rows (`expires_at <= k.created_at`, swept lazily here), then
   * inserts `k`; false when a live row holds the key (the primary key decides between concurrent
   * claims).
   */
  readonly claimIdempotencyKey: (k: IdempotencyKey) => Effect.Effect<boolean>
  /** The live (unexpired at `now`) row of a key. */
  readonly getIdempotencyKey: (scope: string, key: string, now: number) => Effect.Effect<Option.Option<IdempotencyKey>>
  /** Stores the response of an `in_progress` key and marks it `completed`. */
  readonly completeIdempotencyKey: (
    scope: string,
    key: string,
    response: string,
    keyId: string
  ) => Effect.Effect<void>
  /** Drops an `in_progress` key (its request failed with a 5xx or was interrupted), so a retry can run. */
  readonly releaseIdempotencyKey: (scope: string, key: string) => Effect.Effect<void>

  /**
   * Refills the bucket `key` (`rate` tokens a second since it was last touched, up to `burst`; a
   * missing bucket is full) and takes one token if it holds at least one, atomically: concurrent
   * takes on one key, from any process on the same database, never take the same token twice.
   * A clock behind the stored time adds nothing and never moves the bucket's time back.
   */
  readonly takeRateToken: (key: string, bucket: RateBucket) => Effect.Effect<RateTake>
  /**
   * Deletes the buckets untouched since before `before` (epoch ms). A bucket idle for `burst /
   * rate` seconds is full, which is what a missing bucket means, so dropping it changes nothing.
   */
  readonly dropRateBuckets: (before: number) => Effect.Effect<void>

  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}

/**
 * @since 0.1.0
 * @category tags
 */
export class Repo extends Context.Tag("Persistence/Repo")<Repo, Service>() {}
