/**
 * The sync tables of a connection. Reads go through BioTrack's `sync_*` tables (whole tables,
 * no pages); each downloaded table (and each `inventory_qa_check` answer) is kept per connection
 * for {@link CACHE_TTL}, so that page 2 does not download everything again. Writes clear a
 * connection's tables (`invalidate`).
 */
import type { ProviderError, Session } from "@tracebridge/core"
import { Skipped } from "@tracebridge/core"
import { Clock, Duration, Effect } from "effect"
import type { Client } from "../ProviderBClient.js"
import { descriptor } from "./descriptor.js"
import type { QaCheck } from "./wire/QaSample.js"
import { QaCheckResult } from "./wire/QaSample.js"
import type { SyncAction, SyncTables } from "./wire/Tables.js"
import { decodeRows, rawAnswer } from "./wire/Tables.js"

/** How long a downloaded sync table is reused for the same connection. */
export const CACHE_TTL = Duration.seconds(30)

/** The decoded tables of every sync action. */
export type Tables = { readonly [S in SyncAction]: SyncTables<S> }

/** The tables of the connections, over the session client. */
export interface SyncTablesCache {
  /** A value kept per connection under `key` for {@link CACHE_TTL}, loaded when missing or stale. */
  readonly cached: <A>(
    session: Session.Session,
    key: string,
    load: Effect.Effect<A, ProviderError.ProviderError>
  ) => Effect.Effect<A, ProviderError.ProviderError>
  /** Forgets everything kept for a connection. */
  readonly invalidate: (session: Session.Session) => Effect.Effect<void>
  /** The tables of a sync action, downloaded whole (from transaction 0). */
  readonly sync: <S extends SyncAction>(
    session: Session.Session,
    action: S,
    operation: string
  ) => Effect.Effect<Tables[S], ProviderError.ProviderError>
  /** The tables of a sync action downloaded again now (what a write checks before and after it writes). */
  readonly fresh: <S extends SyncAction>(
    session: Session.Session,
    action: S,
    operation: string
  ) => Effect.Effect<Tables[S], ProviderError.ProviderError>
  /** The panels of every judged sample of the login (one `inventory_qa_check` per sample). */
  readonly checks: (
    session: Session.Session,
    operation: string
  ) => Effect.Effect<Map<string, QaCheck>, ProviderError.ProviderError>
}

/**
 * A cache of sync tables over the session client, each kept for `ttl` (zero: every read downloads
 * again, for an upstream whose changes this adapter does not see, such as the sandbox's scenarios).
 */
export const make = (client: Client, ttl: Duration.Duration = CACHE_TTL): SyncTablesCache => {
  const cache = new Map<string, { readonly expires: number; readonly value: unknown }>()
  const prefix = (session: Session.Session) => `${session.key}|${session.baseUrl ?? ""}|${session.state}|`

  const cached = <A>(session: Session.Session, key: string, load: Effect.Effect<A, ProviderError.ProviderError>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const hit = cache.get(prefix(session) + key)
      if (hit !== undefined && hit.expires > now) return hit.value as A
      const value = yield* load
      if (Duration.toMillis(ttl) > 0) cache.set(prefix(session) + key, { expires: now + Duration.toMillis(ttl), value })
      return value
    })

  const invalidate = (session: Session.Session) =>
    Effect.sync(() => {
      for (const key of [...cache.keys()]) if (key.startsWith(prefix(session))) cache.delete(key)
    })

  /**
   * A table is downloaded whole and read row by row: a row that cannot be read is left out, logged
   * when the table is downloaded, and reported on every read that uses the table, so that no read
   * drops it silently.
   */
  const sync = <S extends SyncAction>(session: Session.Session, action: S, operation: string) =>
    Effect.gen(function*() {
      const { skipped, tables } = yield* cached(
        session,
        action,
        client.call(session, action, { download: 1, transaction_start: 0 }, rawAnswer(action), { operation }).pipe(
          Effect.map((raw) => decodeRows(action, raw)),
          Effect.tap(({ skipped }) =>
            Effect.forEach(
              skipped,
              (row) =>
                Effect.logWarning("provider_b: skipped an upstream row that cannot be read").pipe(
                  Effect.annotateLogs({
                    provider: "provider_b",
                    state: session.state,
                    operation,
                    field: row.field,
                    upstream_id: row.upstream_id
                  })
                ),
              { discard: true }
            )
          )
        )
      )
      yield* Effect.forEach(skipped, (row) => Skipped.report({ upstream_id: row.upstream_id, reason: row.reason }), {
        discard: true
      })
      return tables as Tables[S]
    })

  const fresh = <S extends SyncAction>(session: Session.Session, action: S, operation: string) =>
    Effect.zipRight(Effect.sync(() => cache.delete(prefix(session) + action)), sync(session, action, operation))

  const checks = (session: Session.Session, operation: string) =>
    Effect.gen(function*() {
      const { inventory_qa_sample } = yield* sync(session, "sync_inventory_qa_sample", operation)
      const judged = inventory_qa_sample.filter((s) => !s.deleted && s.result !== 0)
      const found = yield* Effect.forEach(
        judged,
        (sample) =>
          cached(
            session,
            `qa_check:${sample.inventoryid}`,
            client.call(session, "inventory_qa_check", { sample_id: sample.inventoryid }, QaCheckResult, {
              operation,
              notFound: { resource: "lab_result", id: sample.inventoryid }
            })
          ).pipe(Effect.map((answer) => [sample.inventoryid, answer.data] as const)),
        { concurrency: descriptor.rateLimit.concurrency }
      )
      return new Map<string, QaCheck>(found)
    })

  return { cached, invalidate, sync, fresh, checks }
}
