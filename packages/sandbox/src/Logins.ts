/**
 * The sandbox's test logins, in the Plaid style. Any login whose user part starts with
 * `user_good` works (and each distinct one gets its own world); `user_bad` is refused as a wrong
 * login, `user_locked` as a locked account, both exactly as the real system words it.
 *
 * | provider | good | wrong | locked |
 * |---|---|---|---|
 * | provider_a | user key `user_good` | `user_bad` | `user_locked` |
 * | provider_b | UBI `000000000`, username `user_good`, password `pass_good` | username `user_bad` or another password | username `user_locked` |
 *
 * @since 0.1.0
 */
import type { ProviderName } from "@tracebridge/core"

/**
 * The documented logins per provider (what the Connect widget and the banner show).
 *
 * @since 0.1.0
 * @category constants
 */
export const documented: Record<
  ProviderName.ProviderName,
  {
    readonly good: Record<string, string>
    readonly bad: Record<string, string>
    readonly locked: Record<string, string>
  }
> = {
  provider_a: {
    good: { user_key: "user_good" },
    bad: { user_key: "user_bad" },
    locked: { user_key: "user_locked" }
  },
  provider_b: {
    good: { ubi: "000000000", username: "user_good", password: "pass_good" },
    bad: { ubi: "000000000", username: "user_bad", password: "pass_good" },
    locked: { ubi: "000000000", username: "user_locked", password: "pass_good" }
  }
}

/**
 * The outcome of a sandbox login: the world key it opens, or why it is refused.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | { readonly _tag: "Ok"; readonly login: string }
  | { readonly _tag: "Invalid" }
  | { readonly _tag: "Locked" }

/**
 * Checks a provider_a user key.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkUserKey = (userKey: string): Outcome =>
  userKey.startsWith("user_good")
    ? { _tag: "Ok", login: userKey }
    : userKey.startsWith("user_locked")
    ? { _tag: "Locked" }
    : { _tag: "Invalid" }

/**
 * Checks a provider_b login.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkBioTrack = (ubi: string, username: string, password: string): Outcome => {
  if (username.startsWith("user_locked")) return { _tag: "Locked" }
  if (!/^\d{9}$/.test(ubi) || !username.startsWith("user_good") || password !== "pass_good") return { _tag: "Invalid" }
  return { _tag: "Ok", login: `${ubi}:${username}` }
}
