/**
 * provider_b's sandbox logins: UBI `000000000` (any 9 digits), username `user_good` and password
 * `pass_good`; username `user_bad` or another password is refused, `user_locked` is a locked account.
 *
 * @since 0.1.0
 */
import type { Logins, Outcome } from "../../Logins.js"
import { checkUser } from "../../Logins.js"

/**
 * Checks a BioTrack-style login.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkBioTrack = (ubi: string, username: string, password: string): Outcome => {
  if (username.startsWith("user_locked")) return { _tag: "Locked" }
  if (!/^\d{9}$/.test(ubi) || password !== "pass_good") return { _tag: "Invalid" }
  return checkUser(username, `${ubi}:${username}`)
}

/**
 * @since 0.1.0
 * @category logins
 */
export const logins: Logins = {
  good: { ubi: "000000000", username: "user_good", password: "pass_good" },
  bad: { ubi: "000000000", username: "user_bad", password: "pass_good" },
  locked: { ubi: "000000000", username: "user_locked", password: "pass_good" },
  check: (c) => checkBioTrack(c.ubi ?? "", c.username ?? "", c.password ?? ""),
  scope: (c, key) => ({ ...c, username: `${c.username ?? ""}~${key}` })
}
