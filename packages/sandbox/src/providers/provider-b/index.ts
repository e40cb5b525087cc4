/**
 * provider_b's sandbox part: the BioTrack-style action API emulator, its test logins and how its
 * worlds are seeded, with the adapter's module value.
 *
 * @since 0.1.0
 */
import { ProviderB } from "@tracebridge/adapter-provider-b"
import type { SandboxProvider } from "../../SandboxProvider.js"
import * as Emulator from "./Emulator.js"
import { logins } from "./Logins.js"
import { profile } from "./Profile.js"

/**
 * @since 0.1.0
 * @category providers
 */
export const provider: SandboxProvider = {
  module: ProviderB.module,
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
