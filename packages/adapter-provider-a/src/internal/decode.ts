import { ProviderError } from "@tracebridge/core"
import type { ParseResult } from "effect"
import { Either, Schema } from "effect"
import { canonicalize } from "./keys.js"
import { MissingField } from "./mappers/context.js"

/** Decodes provider JSON (any key casing) with a wire schema; failures name the field. */
export const decodeWire = <A, I>(schema: Schema.Schema<A, I>, operation: string) => {
  const decode = Schema.decodeUnknownEither(schema)
  return (raw: unknown): Either.Either<A, ProviderError.ProviderInvalidResponse> =>
    Either.mapLeft(
      decode(canonicalize(raw)),
      (error) => ProviderError.ProviderInvalidResponse.fromParseError({ provider: "provider_a", operation, error })
    )
}

/** Runs a mapper, turning a missing required field into `ProviderInvalidResponse`. */
export const mapWire =
  <A, B>(operation: string, map: (a: A) => B) => (a: A): Either.Either<B, ProviderError.ProviderInvalidResponse> => {
    try {
      return Either.right(map(a))
    } catch (e) {
      if (e instanceof MissingField) {
        return Either.left(
          new ProviderError.ProviderInvalidResponse({
            provider: "provider_a",
            operation,
            path: e.path,
            message: `provider_a answered ${operation} without ${e.path}`
          })
        )
      }
      throw e
    }
  }

/** Checks a mapped object against its core schema (exact fields). */
export const checkCore = <A>(schema: Schema.Schema<A, any>, operation: string) => {
  const validate = Schema.validateEither(schema, { onExcessProperty: "error" })
  return (value: A): Either.Either<A, ProviderError.ProviderInvalidResponse> =>
    Either.mapLeft(
      validate(value),
      (error: ParseResult.ParseError) =>
        ProviderError.ProviderInvalidResponse.fromParseError({ provider: "provider_a", operation, error })
    )
}
