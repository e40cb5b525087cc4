/**
 * What every check family shares: `check` (a name and a body over the port, the fixture and an
 * assertion), `expectFailure`, the exact-fields test, and small list helpers.
 */
import type { SchemaAST } from "effect"
import { Effect, Either, Schema } from "effect"
import type { ProviderError } from "../../ProviderError.js"
import type { ProviderName } from "../../ProviderName.js"
import { ProviderPort } from "../../ProviderPort.js"
import * as Resource from "../../Resource.js"
import { deepEqual } from "../equal.js"
import type { Check, Fixture } from "./model.js"
import { ContractFixture, ContractViolation } from "./model.js"

/** The port under test. */
export type Port = ProviderPort["Type"]

/** Fails the check with `message` unless `condition` holds. */
export type Assert = (condition: boolean, message: string) => Effect.Effect<void, ContractViolation>

/** A row of `Resource.resources`: the union of every row, for what the kit reads of any resource. */
export type Definition = Resource.Resources[Resource.Name]

/** The row of a resource. */
export const definitionOf = (name: Resource.Name): Definition => Resource.resources[name]

/** A check named `name`: `body` gets the port, the fixture and an assertion that fails the check. */
export const check = (
  name: string,
  body: (port: Port, fixture: Fixture, assert: Assert) => Effect.Effect<void, ContractViolation | ProviderError>
): Check => ({
  name,
  run: Effect.gen(function*() {
    const port = yield* ProviderPort
    const fixture = yield* ContractFixture
    yield* body(
      port,
      fixture,
      (condition, message) => condition ? Effect.void : Effect.fail(new ContractViolation({ check: name, message }))
    )
  })
})

/** Succeeds with the error when the effect fails with `tag`; a violation otherwise. */
export const expectFailure = <A>(
  effect: Effect.Effect<A, ProviderError>,
  tag: ProviderError["_tag"],
  name: string
): Effect.Effect<ProviderError, ContractViolation> =>
  Effect.either(effect).pipe(
    Effect.flatMap((result) =>
      Either.isLeft(result) && result.left._tag === tag
        ? Effect.succeed(result.left)
        : Effect.fail(
          new ContractViolation({
            check: name,
            message: Either.isLeft(result)
              ? `expected ${tag}, got ${result.left._tag}: ${result.left.message}`
              : `expected ${tag}, but the call succeeded`
          })
        )
    )
  )

/** The object carries exactly the fields of the schema (a struct), no more, no fewer. */
export const exactFields = (schema: { readonly ast: SchemaAST.AST }, item: unknown, assert: Assert) => {
  const ast = schema.ast
  const expected = ast._tag === "TypeLiteral" ? ast.propertySignatures.map((p) => String(p.name)).sort() : []
  const actual = Object.keys(item as object).sort()
  return assert(
    deepEqual(expected, actual),
    `fields differ from the spec: missing [${expected.filter((k) => !actual.includes(k))}], extra [${
      actual.filter((k) => !expected.includes(k))
    }]`
  )
}

/** Whether the object validates against the schema, excess properties refused. */
export const validates = (schema: Schema.Schema.AnyNoContext, item: unknown): boolean =>
  Either.isRight(Schema.validateEither(schema, { onExcessProperty: "error" })(item))

/** The facility the fixture reads a resource at. */
export const facilityOf = (fx: Fixture, name: Resource.Name): string => fx.facilityFor?.[name] ?? fx.facilityId

/** The `id` of a listed object (every core object has one). */
export const idOf = (item: unknown): string => (item as { readonly id: string }).id

/** Epoch milliseconds as an ISO 8601 date-time. */
export const iso = (ms: number): string => new Date(ms).toISOString()

export const nonNull = <A>(a: A | null | undefined): a is A => a !== null && a !== undefined

export const distinct = <A>(xs: ReadonlyArray<A>): Array<A> => [...new Set(xs)]

/** Up to `n` of `xs`: the first, the last and evenly between. */
export const spread = <A>(xs: ReadonlyArray<A>, n: number): ReadonlyArray<A> =>
  xs.length <= n
    ? xs
    : distinct(Array.from({ length: n }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (n - 1))]!))

/** Ids for a message: the first `max`, then how many more. */
export const listed = (ids: ReadonlyArray<string>, max = 5) =>
  `[${ids.slice(0, max).join(", ")}${ids.length > max ? `, … ${ids.length - max} more` : ""}]`

/** Whether the error names a provider other than the port's. */
export const foreignProvider = (error: ProviderError, provider: ProviderName): string | undefined => {
  const named = (error as { readonly provider?: unknown }).provider
  return named === undefined || named === provider ? undefined : String(named)
}

/** A provider name that is not `name` (for foreign sessions and ids). */
export const otherProvider = (name: ProviderName): ProviderName =>
  name === "provider_contract_other" ? "provider_contract_else" : "provider_contract_other"
