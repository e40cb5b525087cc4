// A production connection for the bench: a production organisation and API client made with the
// operator CLI (`packages/http/dist/cli.js`, on the server's own database), a token of the
// production scope, and a provider_a login linked through the Connect widget's routes, against
// the standalone emulator the server's TRACEBRIDGE_PROVIDER_A_BASE_URL points at. Then the managed
// sync the link started, waited for until every facility is live.
import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { call, root } from "./api.mjs"
import { until } from "./proc.mjs"

const cli = join(root, "packages", "http", "dist", "cli.js")

const expect = (answer, status, what) => {
  if (answer.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${answer.status}: ${answer.text.slice(0, 500)}`)
  }
  return answer
}

/** Runs the operator CLI against `env`'s database; its stdout. */
const admin = (env, ...args) =>
  execFileSync(process.execPath, [cli, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: "utf8" })

/**
 * Links a production provider_a connection (state CO, login `user_good`) on `server`, whose
 * database settings are `dbEnv`. Returns `{ token, connection, facilities }`.
 */
export const linkProduction = async (server, dbEnv) => {
  const organisation = admin(dbEnv, "create-org", "bench production", "--plan", "production").split("\t")[0].trim()
  const created = admin(dbEnv, "create-client", organisation)
  const client_id = /client_id=(\S+)/.exec(created)[1]
  const client_secret = /client_secret=(\S+)/.exec(created)[1]
  const token = expect(
    await call(server.api, "POST", "/v1/oauth/token", undefined, {
      grant_type: "client_credentials",
      client_id,
      client_secret,
      scope: "production"
    }),
    200,
    "POST /v1/oauth/token (production)"
  ).body.access_token
  const link = expect(await call(server.api, "POST", "/v1/link/token/create", token, {}), 200, "link token")
  const linkToken = link.body.data.link_token
  const session = expect(
    await call(server.api, "GET", `/connect/session?link_token=${encodeURIComponent(linkToken)}`),
    200,
    "GET /connect/session"
  )
  const submitted = expect(
    await call(server.api, "POST", "/connect/submit", undefined, {
      link_token: linkToken,
      link_session_id: session.body.data.link_session_id,
      provider: "provider_a",
      state: "CO",
      credentials: { user_key: "user_good" }
    }),
    200,
    "POST /connect/submit"
  )
  const exchanged = expect(
    await call(server.api, "POST", "/v1/link/token/exchange", token, {
      public_token: submitted.body.data.public_token
    }),
    200,
    "POST /v1/link/token/exchange (production)"
  )
  const connection = exchanged.body.data.connection_id
  return { token, connection }
}

/** Polls the connection's sync until every facility is live; the last sync answer's data. */
export const syncedLive = (server, token, connection, ms = 600_000, log = () => undefined) => {
  let last = ""
  return until(
    "every facility of the production connection to be live",
    async () => {
      const answer = await call(server.api, "GET", `/v1/connections/${connection}/sync`, token)
      if (answer.status !== 200) throw new Error(`GET …/sync: ${answer.status} ${answer.text.slice(0, 300)}`)
      const facilities = answer.body.data.facilities
      const line = facilities.map((f) => f.status).join(",")
      if (line !== last) {
        last = line
        log(`sync: ${line}`)
      }
      return facilities.length > 0 && facilities.every((f) => f.status === "live") ? answer.body.data : undefined
    },
    ms,
    500
  )
}
