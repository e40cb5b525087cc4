/**
 * provider_b's sandbox part: the BioTrack-style action API emulator, its test logins and how its
 * worlds are seeded. The sandbox's `Registry` pairs it with the adapter's module value of the catalog.
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
  name: "provider_b",
  emulator: Emulator.handle,
  logins,
  profile,
  banner: {
    style: "BioTrack-style",
    examplePath: "/serverjson.asp",
    loginHint:
      `UBI ${logins.good.ubi}, username ${logins.good.username}, password ${logins.good.password}   refused: ${logins.bad.username}   locked: ${logins.locked.username}`,
    auth: "no HTTP auth: POST " +
      JSON.stringify({ API: "4.0", action: "login", license_number: "<UBI>", username: "…", password: "…" }) + " " +
      "answers a sessionid, sent as \"sessionid\" in every later body; " +
      `it expires after ${Emulator.defaults.sessionIdleMs / 60_000} idle minutes (errorcode 63). ` +
      "Refusals are HTTP 200 {success: 0, error, errorcode?}."
  }
}
