/**
 * Answers to sandbox reads, kept by world version. A sandbox world's state system is the
 * deterministic emulator, so the same read on the same world version gives the same answer: the
 * answer can be kept instead of running the adapter and the emulator again (for a list of 100
 * provider_a packages that is five paged calls and a lab-results call per package).
 *
 * What keeps it exact:
 *
 * - the key holds the session, the world's `Sandbox.version` (it changes on every accepted write,
 *   scenario, restore and reset), the operation and its arguments, and the current minute (so an
 *   answer that depends on the clock, such as a default date range, lives at most a minute);
 * - a world with a fault switched on is never read from or written to the cache, so outages, slow
 *   answers, 429s, broken bodies and expired logins always reach the adapter;
 * - only successes are kept; writes pass straight through (and change the version);
 * - the reads that miss the same key while one of them runs wait for that one and share its answer
 *   (one read, not one each: when the answers expire at the minute, every request in flight misses
 *   at once, and a page of provider_a packages is about a hundred emulator calls). If that read
 *   fails or its request goes away, they do not share its failure: they read again, one for all.
 *
 * The host chooses which sessions are cached (`worldKeyOf`: production sessions never are, their
 * state system changes outside our view) and how many answers are kept (the `Cache` it passes: the
 * API's is a bounded LRU, `TRACEBRIDGE_SANDBOX_CACHE_ENTRIES`).
 *
 * @since 0.1.0
 */
import type { ProviderPort, Session } from "@tracebridge/core"
import { Clock, Deferred, Effect, Exit, FiberId, Option } from "effect"
import type { Sandbox } from "./Sandbox.js"

/**
 * Where the answers are kept. A capacity of 0 turns the cache off.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cache {
  readonly capacity: number
  readonly get: (key: string) => unknown
  readonly set: (key: string, value: unknown) => void
}

/**
 * Wraps a sandbox port so its reads are kept by world version. `worldKeyOf` names the world a
 * session reaches (`Sandbox.keyOf`), or undefined to bypass the cache for that session.
 *
 * @since 0.1.0
 * @category constructors
 */
export const wrap = (
  port: ProviderPort.Service,
  sandbox: Sandbox,
  cache: Cache,
  worldKeyOf: (session: Session.Session) => string | undefined
): ProviderPort.Service => {
  if (cache.capacity === 0) return port
  // the reads running, by key: their answer, or none when it failed (those who waited read again)
  const running = new Map<string, Deferred.Deferred<Option.Option<unknown>>>()
  const kept = <A, E>(
    session: Session.Session,
    operation: string,
    args: ReadonlyArray<unknown>,
    read: () => Effect.Effect<A, E>
  ): Effect.Effect<A, E> =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const world = worldKeyOf(session)
      if (world === undefined || sandbox.fault(world) !== undefined) return read()
      const version = sandbox.version(world)
      const key = JSON.stringify([
        session.key,
        world,
        version,
        Math.floor(now / 60_000),
        operation,
        args
      ])
      const hit = cache.get(key)
      if (hit !== undefined) return Effect.succeed(hit as A)
      // Checked and registered in one step, and the registration always undone: a read left
      // registered would hold every later miss of its key.
      return Effect.uninterruptibleMask((restore) => {
        const pending = running.get(key)
        if (pending !== undefined) {
          return restore(Effect.flatMap(Deferred.await(pending), (answer) =>
            Option.isSome(answer) ? Effect.succeed(answer.value as A) : kept(session, operation, args, read)))
        }
        const done = Deferred.unsafeMake<Option.Option<unknown>>(FiberId.none)
        running.set(key, done)
        return Effect.onExit(
          restore(Effect.tap(read(), (value) =>
            Effect.sync(() => {
              // Kept only if nothing changed the world while the read ran.
              if (sandbox.version(world) === version) {
                cache.set(key, value)
              }
            }))),
          (exit) =>
            Effect.sync(() => {
              running.delete(key)
              Deferred.unsafeDone(done, Exit.succeed(Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none()))
            })
        )
      })
    })
  return {
    ...port,
    listFacilities: (session, page) =>
      kept(session, "facilities.list", [page], () => port.listFacilities(session, page)),
    getFacility: (session, facilityId) =>
      kept(session, "facilities.get", [facilityId], () => port.getFacility(session, facilityId)),
    list: (resource, session, facilityId, query, window) =>
      kept(
        session,
        `${resource}.list`,
        [facilityId, query, window],
        () => port.list(resource, session, facilityId, query, window)
      ),
    get: (resource, session, facilityId, id) =>
      kept(session, `${resource}.get`, [facilityId, id], () => port.get(resource, session, facilityId, id)),
    chainOfCustody: (session, facilityId, packageId) =>
      kept(
        session,
        "packages.chainOfCustody",
        [facilityId, packageId],
        () => port.chainOfCustody(session, facilityId, packageId)
      )
  }
}
