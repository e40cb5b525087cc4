/**
 * provider_b's sandbox logins: UBI `000000000` (any 9 digits), username `user_good` and password
 * `pass_good`; username `user_bad` or another password is refused, `user_locked` is a locked account.
 *
 * The sandbox world's QA lab signs in with the same UBI and password and the username prefixed
 * with `lab:` ({@link LAB_PREFIX}): its sessions open the same world as the lab's, and only they
 * may enter QA results (`inventory_qa_sample_results`), as BioTrack lets only labs (ADR 0020).
 *
 * @since 0.1.0
 */
import type { Logins, Outcome } from "../../Logins.js"
import { checkUser } from "../../Logins.js"

/**
 * The prefix of the username the sandbox world's QA lab signs in with (`lab:user_good`).
 *
 * @since 0.1.0
 * @category logins
 */
export const LAB_PREFIX = "lab:"

/**
 * Whether a login is the sandbox world's QA lab's.
 *
 * @since 0.1.0
 * @category checks
 */
export const isLabLogin = (username: string): boolean => username.startsWith(LAB_PREFIX)

/**
 * Checks a BioTrack-style login (the world's lab's too: the world is the company's).
 *
 * @since 0.1.0
 * @category checks
 */
export const checkBioTrack = (ubi: string, entered: string, password: string): Outcome => {
  const username = entered.startsWith(LAB_PREFIX) ? entered.slice(LAB_PREFIX.length) : entered
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
