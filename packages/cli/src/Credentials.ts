/**
 * Where the `tracebridge` command finds the API and its credentials, and what it keeps between
 * runs:
 *
 * - `TRACEBRIDGE_CLIENT_ID` and `TRACEBRIDGE_CLIENT_SECRET` (and `TRACEBRIDGE_API_URL`, default
 *   `http://127.0.0.1:4000`), else the config file `tracebridge login` wrote;
 * - the config folder: `TRACEBRIDGE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/tracebridge`, else
 *   `~/.config/tracebridge`. The folder is 0700 and its files 0600: the config file holds the
 *   client secret;
 * - per client, where `listen` stopped (the last event id forwarded), so that a restart resumes.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { createHmac } from "node:crypto"
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs"
import { homedir } from "node:os"
import { join } from "node:path"

/**
 * The API's origin when none is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_API_URL = "http://127.0.0.1:4000"

/**
 * Who the command acts as, and where.
 *
 * @since 0.1.0
 * @category models
 */
export interface Credentials {
  readonly apiUrl: string
  readonly clientId: string
  readonly clientSecret: string
}

/**
 * The command's config folder.
 *
 * @since 0.1.0
 * @category config
 */
export const configDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.TRACEBRIDGE_CONFIG_DIR ?? join(env.XDG_CONFIG_HOME ?? join(homedir(), ".config"), "tracebridge")

const configFile = (env: NodeJS.ProcessEnv) => join(configDir(env), "config.json")

/**
 * Writes a file only its owner can read, in a folder only its owner can enter, in one step.
 *
 * @since 0.1.0
 * @category config
 */
export const writePrivate = (path: string, dir: string, text: string) => {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  chmodSync(dir, 0o700)
  const temporary = `${path}.${process.pid}.tmp`
  writeFileSync(temporary, text, { mode: 0o600 })
  chmodSync(temporary, 0o600)
  renameSync(temporary, path)
}

/**
 * A failure the command reports as one line (and exit code 1).
 *
 * @since 0.1.0
 * @category errors
 */
export class CliError extends Error {
  readonly _tag = "CliError"
}

/**
 * The credentials from the environment, else from the config file.
 *
 * @since 0.1.0
 * @category config
 */
export const resolve = (env: NodeJS.ProcessEnv = process.env): Effect.Effect<Credentials, CliError> =>
  Effect.suspend(() => {
    const fromEnv = env.TRACEBRIDGE_CLIENT_ID !== undefined && env.TRACEBRIDGE_CLIENT_SECRET !== undefined
    if (fromEnv) {
      return Effect.succeed({
        apiUrl: (env.TRACEBRIDGE_API_URL ?? DEFAULT_API_URL).replace(/\/+$/, ""),
        clientId: env.TRACEBRIDGE_CLIENT_ID!,
        clientSecret: env.TRACEBRIDGE_CLIENT_SECRET!
      })
    }
    const file = configFile(env)
    if (!existsSync(file)) {
      return Effect.fail(
        new CliError(
          "no credentials: set TRACEBRIDGE_CLIENT_ID and TRACEBRIDGE_CLIENT_SECRET, or run `tracebridge login`"
        )
      )
    }
    return Effect.try({
      try: () => {
        const saved = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>
        if (typeof saved.client_id !== "string" || typeof saved.client_secret !== "string") {
          throw new Error("incomplete")
        }
        return {
          apiUrl: (env.TRACEBRIDGE_API_URL ?? (typeof saved.api_url === "string" ? saved.api_url : DEFAULT_API_URL))
            .replace(/\/+$/, ""),
          clientId: saved.client_id,
          clientSecret: saved.client_secret
        }
      },
      catch: () => new CliError(`${file} is not a config file tracebridge login wrote; run tracebridge login again`)
    })
  })

/**
 * Saves the credentials in the config file (0600); its path.
 *
 * @since 0.1.0
 * @category config
 */
export const save = (credentials: Credentials, env: NodeJS.ProcessEnv = process.env): Effect.Effect<string> =>
  Effect.sync(() => {
    const file = configFile(env)
    writePrivate(
      file,
      configDir(env),
      `${
        JSON.stringify(
          { api_url: credentials.apiUrl, client_id: credentials.clientId, client_secret: credentials.clientSecret },
          null,
          2
        )
      }\n`
    )
    return file
  })

/**
 * The secret `listen` signs its forwarded deliveries with: derived from the client's credentials,
 * so it is the same at every start for that client (and changes when its secret is rolled).
 *
 * @since 0.1.0
 * @category signing
 */
export const listenSecret = (credentials: Credentials): string =>
  `whsec_${
    createHmac("sha256", credentials.clientSecret).update(`tracebridge listen v1 ${credentials.clientId}`).digest(
      "base64url"
    )
  }`

const stateFile = (credentials: Credentials, env: NodeJS.ProcessEnv) =>
  join(configDir(env), `listen-${credentials.clientId.replace(/[^A-Za-z0-9_-]/g, "_")}.json`)

/**
 * The last event id `listen` forwarded for this client, if any.
 *
 * @since 0.1.0
 * @category state
 */
export const lastEventId = (credentials: Credentials, env: NodeJS.ProcessEnv = process.env): string | undefined => {
  try {
    const saved = JSON.parse(readFileSync(stateFile(credentials, env), "utf8")) as { last_event_id?: unknown }
    return typeof saved.last_event_id === "string" ? saved.last_event_id : undefined
  } catch {
    return undefined
  }
}

/**
 * Remembers the last event id `listen` forwarded for this client.
 *
 * @since 0.1.0
 * @category state
 */
export const rememberEventId = (
  credentials: Credentials,
  id: string,
  env: NodeJS.ProcessEnv = process.env
): Effect.Effect<void> =>
  Effect.sync(() =>
    writePrivate(stateFile(credentials, env), configDir(env), `${JSON.stringify({ last_event_id: id })}\n`)
  )
