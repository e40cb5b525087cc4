/**
 * A counted permit whose take gives up after a wait and can never lose a permit on the way.
 *
 * Effect's `Semaphore.take` under `Effect.timeout` can: the timeout races the take in a child
 * fiber, and when the permit comes free at the moment the wait ends (a loaded server, whose timers
 * run late), the child takes it after the race was decided for the timeout. The taken permit is
 * then owned by nobody, and every later take waits out its wait for ever. The embedded database's
 * one permit was lost that way in CI, and the server answered 503 from then on.
 *
 * Here a waiter is granted its permit synchronously, by the release that frees it, and its timer
 * and its interruption check that grant synchronously too: a permit is either passed to exactly
 * one waiter or put back. The permit is held by a `Scope`: taking it adds the finalizer that gives
 * it back before the wait starts, so no interruption can fall between the grant and its release.
 *
 * The wait is measured on the real clock (`setTimeout`): what is waited for (another process's
 * lock, a transaction's statements) happens in real time, whatever clock the caller runs on.
 *
 * @since 0.1.0
 */
import type { Duration } from "effect"
import { Effect, Scope } from "effect"
import * as D from "effect/Duration"

/**
 * @since 0.1.0
 * @category models
 */
export interface Permit {
  /**
   * One permit for the scope, waiting at most `wait` for it: true when it was had (and is given
   * back when the scope closes), false when the wait ended first (nothing is held).
   */
  readonly take: (wait: Duration.DurationInput) => Effect.Effect<boolean, never, Scope.Scope>
  /** Permits free now. */
  readonly free: () => number
  /** Takes waiting now. */
  readonly waiting: () => number
}

interface Waiter {
  granted: boolean
  /** Set while the take is suspended: resumes it. */
  wake: ((granted: boolean) => void) | undefined
}

/**
 * A permit of `permits` (first come, first served).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (permits: number): Permit => {
  let free = permits
  const queue: Array<Waiter> = []

  /** Gives one permit back: to the first waiter, or to the pool. */
  const giveBack = () => {
    const next = queue.shift()
    if (next === undefined) {
      free++
      return
    }
    next.granted = true
    next.wake?.(true)
  }

  const leave = (waiter: Waiter) => {
    const i = queue.indexOf(waiter)
    if (i >= 0) queue.splice(i, 1)
  }

  const take = (wait: Duration.DurationInput): Effect.Effect<boolean, never, Scope.Scope> =>
    Effect.uninterruptibleMask((restore) =>
      Effect.flatMap(Scope.Scope, (scope) => {
        const waiter: Waiter = { granted: false, wake: undefined }
        if (free > 0 && queue.length === 0) {
          free--
          waiter.granted = true
        } else {
          queue.push(waiter)
        }
        // Added before any wait: whatever ends the take, a granted permit goes back exactly once.
        const release = Effect.sync(() => {
          if (waiter.granted) {
            waiter.granted = false
            giveBack()
          } else {
            leave(waiter)
          }
        })
        return Effect.zipRight(
          Scope.addFinalizer(scope, release),
          waiter.granted ? Effect.succeed(true) : restore(suspend(waiter, D.toMillis(D.decode(wait))))
        )
      })
    )

  /** Waits for the grant or the end of the wait, whichever comes first; both are decided synchronously. */
  const suspend = (waiter: Waiter, ms: number): Effect.Effect<boolean> =>
    Effect.async<boolean>((resume) => {
      const timer = setTimeout(() => {
        if (waiter.granted) return
        waiter.wake = undefined
        leave(waiter)
        resume(Effect.succeed(false))
      }, Math.max(0, ms))
      waiter.wake = (granted) => {
        clearTimeout(timer)
        waiter.wake = undefined
        resume(Effect.succeed(granted))
      }
      // Interrupted while waiting: the scope's finalizer gives back a permit granted meanwhile.
      return Effect.sync(() => {
        clearTimeout(timer)
        waiter.wake = undefined
      })
    })

  return {
    take,
    free: () => free,
    waiting: () => queue.length
  }
}
