/**
 * The repository in memory: for tests, and for a process that needs no persistence.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Option } from "effect"
import type {
  ApiClient,
  Connection,
  IdempotencyKey,
  LinkToken,
  Organisation,
  PollSnapshot,
  PublicToken,
  SandboxChange,
  Service,
  StoredCiphertext,
  Token,
  WebhookAttempt,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEventRow
} from "./Repo.js"
import { idempotencyRowId, Repo } from "./Repo.js"

/**
 * A fresh, empty repository.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (): Service => {
  const organisations = new Map<string, Organisation>()
  const clients = new Map<string, ApiClient>()
  const tokens = new Map<string, Token>()
  const links = new Map<string, LinkToken>()
  const publics = new Map<string, PublicToken>()
  const usedLinks = new Set<string>()
  const connections = new Map<string, Connection>()
  const changes: Array<SandboxChange> = []
  const endpoints = new Map<string, WebhookEndpoint>()
  const events = new Map<string, WebhookEventRow>()
  const deliveries = new Map<string, WebhookDelivery>()
  const attempts: Array<WebhookAttempt> = []
  const snapshots = new Map<string, PollSnapshot>()
  const idempotency = new Map<string, IdempotencyKey>()
  const buckets = new Map<string, { tokens: number; updated_at: number }>()
  const idemOf = (scope: string, key: string) => `${scope}\u0000${key}`
  const get = <A>(m: Map<string, A>, k: string) => Effect.sync(() => Option.fromNullable(m.get(k)))
  return {
    insertOrganisation: (o) => Effect.sync(() => void organisations.set(o.id, o)),
    getOrganisation: (id) => get(organisations, id),
    listOrganisations: () => Effect.sync(() => [...organisations.values()]),
    setPlan: (id, plan) =>
      Effect.sync(() => {
        const o = organisations.get(id)
        if (o === undefined) return false
        organisations.set(id, { ...o, plan })
        return true
      }),
    insertClient: (c) => Effect.sync(() => void clients.set(c.id, c)),
    getClient: (id) => get(clients, id),
    insertToken: (t) => Effect.sync(() => void tokens.set(t.hash, t)),
    getToken: (hash) => get(tokens, hash),
    useToken: (hash, at) =>
      Effect.sync(() => {
        const t = tokens.get(hash)
        if (t === undefined || t.used_at !== null) return false
        tokens.set(hash, { ...t, used_at: at })
        return true
      }),
    revokeFamily: (family, at) =>
      Effect.sync(() => {
        for (const [k, t] of tokens) {
          if (t.family === family && t.revoked_at === null) tokens.set(k, { ...t, revoked_at: at })
        }
      }),
    revokeConnectionTokens: (connectionId, at) =>
      Effect.sync(() => {
        for (const [k, t] of tokens) {
          if (t.connection_id === connectionId && t.revoked_at === null) tokens.set(k, { ...t, revoked_at: at })
        }
      }),
    insertLinkToken: (t) => Effect.sync(() => void links.set(t.hash, t)),
    getLinkToken: (hash) => get(links, hash),
    linkTokenUsed: (hash) => Effect.sync(() => usedLinks.has(hash)),
    useLinkToken: (hash) =>
      Effect.sync(() => {
        if (usedLinks.has(hash)) return false
        usedLinks.add(hash)
        return true
      }),
    insertPublicToken: (t) => Effect.sync(() => void publics.set(t.hash, t)),
    getPublicToken: (hash) => get(publics, hash),
    usePublicToken: (hash, at) =>
      Effect.sync(() => {
        const t = publics.get(hash)
        if (t === undefined || t.used_at !== null || t.expires_at <= at) return false
        publics.set(hash, { ...t, used_at: at })
        return true
      }),
    insertConnection: (c) => Effect.sync(() => void connections.set(c.id, c)),
    getConnection: (id) => get(connections, id),
    listConnections: (organisationId, offset, limit) =>
      Effect.sync(() => {
        const all = [...connections.values()]
          .filter((c) => c.organisation_id === organisationId)
          .sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id))
        return { items: all.slice(offset, offset + limit), total: all.length }
      }),
    updateConnection: (id, patch) =>
      Effect.sync(() => {
        const c = connections.get(id)
        if (c !== undefined) connections.set(id, { ...c, ...patch })
      }),
    appendSandboxChange: (c) => Effect.sync(() => void changes.push(c)),
    deleteSandboxChanges: (connectionId) =>
      Effect.sync(() => {
        for (let i = changes.length - 1; i >= 0; i--) {
          if (changes[i]!.connection_id === connectionId) changes.splice(i, 1)
        }
      }),
    listSandboxChanges: (connectionId) =>
      Effect.sync(() => changes.filter((c) => c.connection_id === connectionId).sort((a, b) => a.seq - b.seq)),
    insertWebhookEndpoint: (e) => Effect.sync(() => void endpoints.set(e.id, e)),
    getWebhookEndpoint: (id) => get(endpoints, id),
    listWebhookEndpoints: (organisationId) =>
      Effect.sync(() =>
        [...endpoints.values()]
          .filter((e) => e.organisation_id === organisationId)
          .sort((a, b) => a.created_at - b.created_at || a.id.localeCompare(b.id))
      ),
    updateWebhookEndpoint: (id, patch) =>
      Effect.sync(() => {
        const e = endpoints.get(id)
        if (e !== undefined) endpoints.set(id, { ...e, ...patch })
      }),
    deleteWebhookEndpoint: (id) =>
      Effect.sync(() => {
        endpoints.delete(id)
        for (const [k, d] of deliveries) {
          if (d.endpoint_id !== id) continue
          deliveries.delete(k)
          for (let i = attempts.length - 1; i >= 0; i--) if (attempts[i]!.delivery_id === k) attempts.splice(i, 1)
        }
      }),
    insertWebhookEvent: (event, ds) =>
      Effect.sync(() => {
        events.set(event.id, event)
        for (const d of ds) deliveries.set(d.id, d)
      }),
    getWebhookEvent: (id) => get(events, id),
    getWebhookDelivery: (id) => get(deliveries, id),
    listWebhookDeliveries: (endpointId, offset, limit) =>
      Effect.sync(() => {
        const all = [...deliveries.values()]
          .filter((d) => d.endpoint_id === endpointId)
          .sort((a, b) => b.created_at - a.created_at || b.id.localeCompare(a.id))
        return { items: all.slice(offset, offset + limit), total: all.length }
      }),
    listWebhookAttempts: (ids) =>
      Effect.sync(() =>
        attempts
          .filter((a) => ids.includes(a.delivery_id))
          .sort((a, b) => a.delivery_id.localeCompare(b.delivery_id) || a.n - b.n)
      ),
    claimWebhookDeliveries: (now, lockedUntil, limit) =>
      Effect.sync(() => {
        const due = [...deliveries.values()]
          .filter((d) =>
            d.status === "pending" && d.next_attempt_at !== null && d.next_attempt_at <= now &&
            (d.locked_until === null || d.locked_until <= now)
          )
          .sort((a, b) => a.next_attempt_at! - b.next_attempt_at! || a.id.localeCompare(b.id))
          .slice(0, Math.max(0, limit))
        return due.map((d) => {
          const claimed = { ...d, locked_until: lockedUntil }
          deliveries.set(d.id, claimed)
          return claimed
        })
      }),
    recordWebhookAttempt: (attempt, next) =>
      Effect.sync(() => {
        const d = deliveries.get(attempt.delivery_id)
        if (d === undefined || d.attempts !== attempt.n - 1) return false
        attempts.push(attempt)
        deliveries.set(d.id, {
          ...d,
          attempts: attempt.n,
          status: next.status,
          next_attempt_at: next.next_attempt_at,
          locked_until: null,
          updated_at: attempt.at
        })
        return true
      }),
    retryWebhookDelivery: (id, now) =>
      Effect.sync(() => {
        const d = deliveries.get(id)
        if (d !== undefined) {
          deliveries.set(id, { ...d, status: "pending", next_attempt_at: now, locked_until: null, updated_at: now })
        }
      }),
    getPollSnapshot: (connectionId) => get(snapshots, connectionId),
    putPollSnapshot: (s) => Effect.sync(() => void snapshots.set(s.connection_id, s)),
    listCiphertexts: (exceptKeyId) =>
      Effect.sync(() => {
        const out: Array<StoredCiphertext> = []
        for (const c of connections.values()) {
          if (c.credentials !== null && c.key_id !== exceptKeyId) {
            out.push({ column: "connection.credentials", id: c.id, ciphertext: c.credentials, key_id: c.key_id ?? "" })
          }
        }
        for (const e of endpoints.values()) {
          if (e.key_id !== exceptKeyId) {
            out.push({ column: "webhook.secret", id: e.id, ciphertext: e.secret, key_id: e.key_id })
          }
          if (e.previous_secret !== null && e.previous_key_id !== exceptKeyId) {
            out.push({
              column: "webhook.previous_secret",
              id: e.id,
              ciphertext: e.previous_secret,
              key_id: e.previous_key_id ?? ""
            })
          }
        }
        for (const k of idempotency.values()) {
          if (k.response !== null && k.key_id !== exceptKeyId) {
            out.push({
              column: "idempotency.response",
              id: idempotencyRowId.make(k.scope, k.idem_key),
              ciphertext: k.response,
              key_id: k.key_id ?? ""
            })
          }
        }
        return out
      }),
    replaceCiphertext: (old, ciphertext, keyId) =>
      Effect.sync(() => {
        if (old.column === "idempotency.response") {
          const id = idemOf(idempotencyRowId.scope(old.id), idempotencyRowId.key(old.id))
          const k = idempotency.get(id)
          if (k === undefined || k.response !== old.ciphertext) return false
          idempotency.set(id, { ...k, response: ciphertext, key_id: keyId })
          return true
        }
        if (old.column === "connection.credentials") {
          const c = connections.get(old.id)
          if (c === undefined || c.credentials !== old.ciphertext) return false
          connections.set(c.id, { ...c, credentials: ciphertext, key_id: keyId })
          return true
        }
        const e = endpoints.get(old.id)
        if (old.column === "webhook.secret") {
          if (e === undefined || e.secret !== old.ciphertext) return false
          endpoints.set(e.id, { ...e, secret: ciphertext, key_id: keyId })
          return true
        }
        if (e === undefined || e.previous_secret !== old.ciphertext) return false
        endpoints.set(e.id, { ...e, previous_secret: ciphertext, previous_key_id: keyId })
        return true
      }),
    claimIdempotencyKey: (k) =>
      Effect.sync(() => {
        for (const [id, row] of idempotency) if (row.expires_at <= k.created_at) idempotency.delete(id)
        const id = idemOf(k.scope, k.idem_key)
        if (idempotency.has(id)) return false
        idempotency.set(id, k)
        return true
      }),
    getIdempotencyKey: (scope, key, now) =>
      Effect.sync(() =>
        Option.filter(Option.fromNullable(idempotency.get(idemOf(scope, key))), (r) => r.expires_at > now)
      ),
    completeIdempotencyKey: (scope, key, response, keyId) =>
      Effect.sync(() => {
        const row = idempotency.get(idemOf(scope, key))
        if (row !== undefined && row.state === "in_progress") {
          idempotency.set(idemOf(scope, key), { ...row, state: "completed", response, key_id: keyId })
        }
      }),
    releaseIdempotencyKey: (scope, key) =>
      Effect.sync(() => {
        const row = idempotency.get(idemOf(scope, key))
        if (row !== undefined && row.state === "in_progress") idempotency.delete(idemOf(scope, key))
      }),
    takeRateToken: (key, { burst, now, rate }) =>
      Effect.sync(() => {
        const row = buckets.get(key)
        const refilled = row === undefined
          ? burst
          : Math.min(burst, row.tokens + Math.max(0, now - row.updated_at) * rate / 1000)
        const allowed = refilled >= 1
        const tokens = allowed ? refilled - 1 : refilled
        buckets.set(key, { tokens, updated_at: row === undefined ? now : Math.max(row.updated_at, now) })
        return { allowed, tokens }
      }),
    dropRateBuckets: (before) =>
      Effect.sync(() => {
        for (const [key, row] of buckets) if (row.updated_at < before) buckets.delete(key)
      }),
    transaction: (effect) => effect
  }
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(Repo, make)
