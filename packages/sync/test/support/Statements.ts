/** What `self` returned, and how many SQL statements it ran (`@effect/sql`'s `sql.execute` spans). */
import { Effect, Tracer } from "effect"

export const statements = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const base = yield* Effect.tracer
    let n = 0
    const counting = Tracer.make({
      span: (name, ...rest) => {
        if (name === "sql.execute") n++
        return base.span(name, ...rest)
      },
      context: base.context
    })
    const a = yield* Effect.withTracer(self, counting)
    return [a, n] as const
  })
