/**
 * provider_a's sandbox logins: the user API key `user_good` (or any key starting with it),
 * `user_bad` (refused) and `user_locked` (a locked account).
 *
 * @since 0.1.0
 */
import type { Logins } from "../../Logins.js"
import { checkUser } from "../../Logins.js"

/**
 * Checks a user key.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkUserKey = (userKey: string) => checkUser(userKey, userKey)

/**
 * @since 0.1.0
 * @category logins
 */
export const logins: Logins = {
  good: { user_key: "user_good" },
  bad: { user_key: "user_bad" },
  locked: { user_key: "user_locked" },
  check: (c) => checkUserKey(c.user_key ?? ""),
  scope: (c, key) => ({ ...c, user_key: `${c.user_key ?? ""}~${key}` })
}
