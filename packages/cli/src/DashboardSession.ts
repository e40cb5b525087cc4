/**
 * The dashboard session the `logs` commands read the request log with (issue #34's `logs tail`).
 *
 * The request log is the dashboard's (DECISIONS: its API takes session cookies and CSRF tokens,
 * never bearer tokens), so the command signs in as a member of the team, as the Logs page does:
 * `tracebridge login --email …` posts the e-mail, the password and, when the member has one, a
 * TOTP code to `/dashboard/api/session`, and keeps the session cookie in `dashboard.json` in the
 * config folder (0600, beside the client credentials). The password is never kept. A session
 * lasts what the dashboard's do (12 hours); then the command says to sign in again.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { CliError, configDir, writePrivate } from "./Credentials.js"

/**
 * A signed-in dashboard session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Session {
  readonly apiUrl: string
  /** The `tb_session` cookie's value: a secret, kept in the 0600 file only. */
  readonly cookie: string
  readonly email: string
  readonly organisationId: string
  readonly role: string
  /** Epoch ms. */
  readonly expiresAt: number
}

/** The dashboard's session cookie. */
const COOKIE = "tb_session"

const sessionFile = (env: NodeJS.ProcessEnv) => join(configDir(env), "dashboard.json")

const describe = async (response: Response) => {
  const text = await response.text()
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } }
    if (body.error?.message !== undefined) return `${body.error.code ?? "error"}: ${body.error.message}`
  } catch {
    // not JSON: the status says it
  }
  return `the dashboard answered ${response.status}`
}

/**
 * Signs in to the dashboard; the session (not yet saved).
 *
 * @since 0.1.0
 * @category sign-in
 */
export const signIn = (
  apiUrl: string,
  login: { readonly email: string; readonly password: string; readonly totpCode?: string | undefined }
): Effect.Effect<Session, CliError> =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(`${apiUrl}/dashboard/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          email: login.email,
          password: login.password,
          ...(login.totpCode === undefined ? {} : { totp_code: login.totpCode })
        })
      })
      if (!response.ok) throw new CliError(`dashboard sign-in failed: ${await describe(response)}`)
      const cookie = response.headers.getSetCookie()
        .map((c) => c.split(";")[0]!)
        .find((c) => c.startsWith(`${COOKIE}=`))
        ?.slice(COOKIE.length + 1)
      if (cookie === undefined || cookie === "") throw new CliError("dashboard sign-in failed: no session cookie")
      const me = (await response.json()) as {
        user: { email: string }
        organisation: { id: string }
        role: string
        expires_at?: number
      }
      return {
        apiUrl,
        cookie,
        email: me.user.email,
        organisationId: me.organisation.id,
        role: me.role,
        expiresAt: typeof me.expires_at === "number" ? me.expires_at : Date.now() + 12 * 3_600_000
      }
    },
    catch: (error) => error instanceof CliError ? error : new CliError(`dashboard sign-in failed: ${String(error)}`)
  })

/**
 * Saves the session in `dashboard.json` (0600); its path.
 *
 * @since 0.1.0
 * @category config
 */
export const save = (session: Session, env: NodeJS.ProcessEnv = process.env): Effect.Effect<string> =>
  Effect.sync(() => {
    const file = sessionFile(env)
    writePrivate(
      file,
      configDir(env),
      `${
        JSON.stringify(
          {
            api_url: session.apiUrl,
            session: session.cookie,
            email: session.email,
            organisation_id: session.organisationId,
            role: session.role,
            expires_at: session.expiresAt
          },
          null,
          2
        )
      }\n`
    )
    return file
  })

const signInAgain = "run `tracebridge login --email <you@example.com>` to sign in to the dashboard"

/**
 * The saved session, when there is one that has not expired.
 *
 * @since 0.1.0
 * @category config
 */
export const resolve = (env: NodeJS.ProcessEnv = process.env): Effect.Effect<Session, CliError> =>
  Effect.suspend(() => {
    const file = sessionFile(env)
    if (!existsSync(file)) {
      return Effect.fail(new CliError(`the request log is the dashboard's: ${signInAgain}`))
    }
    return Effect.try({
      try: () => JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>,
      catch: () => new CliError(`${file} is not a file tracebridge login wrote; ${signInAgain}`)
    }).pipe(
      Effect.flatMap((saved) => {
        const { api_url, email, expires_at, organisation_id, role, session } = saved
        if (
          typeof api_url !== "string" || typeof session !== "string" || typeof email !== "string" ||
          typeof organisation_id !== "string" || typeof role !== "string" || typeof expires_at !== "number"
        ) {
          return Effect.fail(new CliError(`${file} is not a file tracebridge login wrote; ${signInAgain}`))
        }
        if (expires_at <= Date.now()) {
          return Effect.fail(new CliError(`the dashboard session has ended; ${signInAgain}`))
        }
        return Effect.succeed({
          apiUrl: (env.TRACEBRIDGE_API_URL ?? api_url).replace(/\/+$/, ""),
          cookie: session,
          email,
          organisationId: organisation_id,
          role,
          expiresAt: expires_at
        })
      })
    )
  })

/**
 * A GET of the dashboard's API as this session; the JSON answer. A refused session (401) says to
 * sign in again.
 *
 * @since 0.1.0
 * @category requests
 */
export const get = <A>(session: Session, path: string): Effect.Effect<A, CliError> =>
  Effect.tryPromise({
    try: async () => {
      const response = await fetch(`${session.apiUrl}/dashboard/api${path}`, {
        headers: { cookie: `${COOKIE}=${session.cookie}`, accept: "application/json" }
      })
      if (response.status === 401) throw new CliError(`the dashboard session has ended; ${signInAgain}`)
      if (!response.ok) throw new CliError(`reading the request log: ${await describe(response)}`)
      return (await response.json()) as A
    },
    catch: (error) => error instanceof CliError ? error : new CliError(`reading the request log: ${String(error)}`)
  })
