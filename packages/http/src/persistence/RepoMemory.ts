/**
 * The repository in memory: for tests, and for a process that needs no persistence.
 *
 * @since 0.1.0
 */
import { Effect, Layer, Option } from "effect"
import type {
  ApiClient,
  Connection,
  LinkToken,
  Organisation,
  PublicToken,
  SandboxChange,
  Service,
  Token
} from "./Repo.js"
import { Repo } from "./Repo.js"

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
  const connections = new Map<string, Connection>()
  const changes: Array<SandboxChange> = []
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
    listSandboxChanges: (connectionId) =>
      Effect.sync(() => changes.filter((c) => c.connection_id === connectionId).sort((a, b) => a.seq - b.seq)),
    transaction: (effect) => effect
  }
}

/**
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.sync(Repo, make)
