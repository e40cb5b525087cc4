/**
 * provider_a's sandbox part: the Metrc-style REST emulator, its test logins and how its worlds
 * are seeded. The sandbox's `Registry` pairs it with the adapter's module value of the catalog.
 *
 * @since 0.1.0
 */
import type { SandboxPart } from "../../SandboxProvider.js"
import * as Emulator from "./Emulator.js"
import { profile } from "./seeding.js"
import { logins } from "./testLogins.js"

/**
 * @since 0.1.0
 * @category providers
 */
export const provider: SandboxPart = {
  name: "provider_a",
  emulator: Emulator.handle,
  logins,
  profile,
  banner: {
    style: "Metrc-style REST",
    examplePath: "/facilities/v2/",
    loginHint:
      `user key ${logins.good.user_key} (any vendor key)   refused: ${logins.bad.user_key}   locked: ${logins.locked.user_key}`,
    auth: "HTTP Basic on every call: username = vendor (integrator) API key, any non-empty value here; " +
      `password = user API key (${logins.good.user_key}). Facility calls take ?licenseNumber= ` +
      "(a licence of GET /facilities/v2/). A refused key is 401 with WWW-Authenticate: Basic."
  }
}
