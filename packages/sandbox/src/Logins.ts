/**
 * The sandbox's test logins, in the Plaid style: each provider's sandbox part documents a good, a
 * wrong and a locked login (`SandboxProvider.logins`). Any login whose user part starts with
 * `user_good` works, and each distinct one gets its own world; `user_bad` is refused as a wrong
 * login and `user_locked` as a locked account, both worded as the real system words them. The
 * table of each provider's logins is in `packages/sandbox/README.md` and `tracebridge-sandbox --help`.
 *
 * @since 0.1.0
 */

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
 * A provider's sandbox logins.
 *
 * @since 0.1.0
 * @category models
 */
export interface Logins {
  /** The documented logins, by credential field (what the widget, the banner and the docs show). */
  readonly good: Readonly<Record<string, string>>
  readonly bad: Readonly<Record<string, string>>
  readonly locked: Readonly<Record<string, string>>
  /** Checks an entered login as the emulator does. */
  readonly check: (credentials: Readonly<Record<string, string>>) => Outcome
  /**
   * The entered login kept apart per connection: `~` and the key appended to the field that names
   * the world, so that every connection behind `/v1` has its own world.
   */
  readonly scope: (credentials: Readonly<Record<string, string>>, key: string) => Readonly<Record<string, string>>
}

/**
 * The world login a good login opens, or undefined when the login is refused.
 *
 * @since 0.1.0
 * @category getters
 */
export const worldLogin = (logins: Logins, credentials: Readonly<Record<string, string>>): string | undefined => {
  const outcome = logins.check(credentials)
  return outcome._tag === "Ok" ? outcome.login : undefined
}

/**
 * The user part of a login: `user_good…` works, `user_locked…` is a locked account, anything
 * else a wrong login.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkUser = (user: string, login: string): Outcome =>
  user.startsWith("user_good")
    ? { _tag: "Ok", login }
    : user.startsWith("user_locked")
    ? { _tag: "Locked" }
    : { _tag: "Invalid" }
