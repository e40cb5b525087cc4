/**
 * The descriptor and sessions: the descriptor is complete, the state has base URLs and the
 * capabilities the port reports, the fixture login passes and a refused one is
 * `ProviderLoginRequired`, an unserved state is `UnsupportedState`, and another provider's session
 * is `InvalidInput`.
 */
import { Effect, Redacted } from "effect"
import * as Page from "../../Page.js"
import { baseUrl, problems } from "../../ProviderDescriptor.js"
import type { UsState } from "../../ProviderName.js"
import { stateCodes } from "../../ProviderName.js"
import { deepEqual, firstDifference } from "../equal.js"
import { check, expectFailure, otherProvider } from "./kit.js"
import type { Check } from "./model.js"

/** The checks of the descriptor, the credentials and sessions, for one state. */
export const descriptorChecks = (state: UsState): ReadonlyArray<Check> => [
  check("descriptor: is complete and consistent", (port, _fx, assert) => {
    const found = problems(port.descriptor)
    return assert(found.length === 0, found.join("; "))
  }),
  check(`descriptor: ${state} has a sandbox and a production base URL`, (port, _fx, assert) =>
    Effect.gen(function*() {
      for (const environment of ["sandbox", "production"] as const) {
        const url = yield* baseUrl(port.descriptor, state, environment)
        yield* assert(/^https?:\/\/\S+$/.test(url), `the ${environment} base URL of ${state} is ${url}`)
      }
    })),
  check(
    `descriptor: the port reports ${state}'s capabilities as the descriptor claims them`,
    (port, _fx, assert) =>
      Effect.gen(function*() {
        const reported = yield* port.capabilities(state)
        const claimed = port.descriptor.capabilities[state]
        yield* assert(
          deepEqual(reported, claimed),
          `the port reports capabilities that differ from the descriptor at ${firstDifference(reported, claimed)}`
        )
      })
  ),
  check("credentials: the fixture login passes the credential check", (port, fx) => port.checkCredentials(fx.session)),
  check("credentials: a refused login is ProviderLoginRequired", (port, fx) =>
    expectFailure(
      port.checkCredentials({
        ...fx.session,
        key: `${fx.session.key}:refused`,
        credentials: Redacted.make(fx.invalidCredentials)
      }),
      "ProviderLoginRequired",
      "refused login"
    )),
  check("sessions: a state the provider does not serve is UnsupportedState", (port, fx) =>
    Effect.gen(function*() {
      const other = stateCodes.find((s) => port.descriptor.capabilities[s] === undefined)
      if (other === undefined) return // it serves every state
      yield* expectFailure(port.capabilities(other), "UnsupportedState", "capabilities of an unserved state")
      yield* expectFailure(
        port.listFacilities({ ...fx.session, state: other }, Page.firstPage),
        "UnsupportedState",
        "facilities in an unserved state"
      )
    })),
  check("sessions: a session of another provider is InvalidInput", (port, fx) =>
    Effect.asVoid(
      expectFailure(
        port.listFacilities({ ...fx.session, provider: otherProvider(port.descriptor.name) }, Page.firstPage),
        "InvalidInput",
        "foreign session"
      )
    ))
]
