/**
 * Provider failures: the fixture arranges every provider-side error kind (or says why it cannot),
 * and each arranged failure maps into the error family, naming this provider.
 */
import { Effect } from "effect"
import * as Page from "../../Page.js"
import type { ProviderError } from "../../ProviderError.js"
import type { Assert, Port } from "./kit.js"
import { check, expectFailure, foreignProvider } from "./kit.js"
import type { FailureCase, Fixture } from "./model.js"
import { providerSideKinds } from "./model.js"

/** Arranges the failure, makes its call, and expects its error, naming this provider. */
const runCase = (port: Port, fx: Fixture, failure: FailureCase, assert: Assert) =>
  Effect.gen(function*() {
    yield* failure.arrange
    const call = failure.call?.(port, fx) ?? port.list("packages", fx.session, fx.facilityId, {}, Page.firstPage)
    const error = yield* expectFailure(call, failure.expected, failure.name)
    const foreign = foreignProvider(error, port.descriptor.name)
    yield* assert(
      foreign === undefined,
      `${failure.name}: the ${error._tag} names provider ${foreign}, not ${port.descriptor.name}`
    )
  })

const declaredReason = (fx: Fixture, kind: ProviderError["_tag"]): string | undefined => {
  const reason = fx.notApplicable?.failures?.[kind]
  return reason !== undefined && reason.trim().length > 0 ? reason : undefined
}

/** Every provider-side kind is arranged by the fixture or declared not applicable, with a reason. */
export const failureCoverageCheck = check(
  "failures: the fixture arranges every provider-side error kind, or says why not",
  (_port, fx, assert) =>
    Effect.gen(function*() {
      const arranged = new Set(fx.failures.map((f) => f.expected))
      const missing = providerSideKinds.filter((k) => !arranged.has(k) && declaredReason(fx, k) === undefined)
      const stale = providerSideKinds.filter((k) => arranged.has(k) && fx.notApplicable?.failures?.[k] !== undefined)
      const unknown = Object.keys(fx.notApplicable?.failures ?? {}).filter(
        (k) => !providerSideKinds.includes(k as ProviderError["_tag"])
      )
      yield* assert(
        missing.length === 0,
        `not arranged: ${missing.join(", ")}. Add a FailureCase for each, or declare notApplicable.failures.<kind> ` +
          "with the reason the fixture cannot cause it"
      )
      yield* assert(stale.length === 0, `declared not applicable but arranged: ${stale.join(", ")}`)
      yield* assert(
        unknown.length === 0,
        `notApplicable.failures names kinds the kit provokes itself: ${unknown.join(", ")}`
      )
    })
)

/** Each case the fixture arranges for a provider-side kind fails with that kind, naming this provider. */
export const failureKindCheck = (kind: ProviderError["_tag"]) =>
  check(
    `failures: ${kind} arranged by the fixture maps into the error family`,
    (port, fx, assert) =>
      Effect.gen(function*() {
        const cases = fx.failures.filter((f) => f.expected === kind)
        yield* assert(
          cases.length > 0 || declaredReason(fx, kind) !== undefined,
          `the fixture arranges no failure that must become ${kind}: add a FailureCase, or declare ` +
            `notApplicable.failures.${kind} with a reason`
        )
        for (const failure of cases) yield* runCase(port, fx, failure, assert)
      })
  )

/** The fixture's cases of other kinds fail as they say. */
export const otherFailuresCheck = check(
  "failures: the fixture's other cases map as expected",
  (port, fx, assert) =>
    Effect.forEach(
      fx.failures.filter((f) => !providerSideKinds.includes(f.expected)),
      (failure) => runCase(port, fx, failure, assert),
      { discard: true }
    )
)
