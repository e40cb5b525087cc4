/**
 * The dashboard's tests' helpers (issue #33): raw calls that read the status, the headers and the
 * `Set-Cookie` of an answer; a typed `HttpApiClient` of `DashboardApi` for a signed-in member; and
 * members of each role, made through invitations as a person would be.
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { DashboardApi } from "@tracebridge/api"
import { Bootstrap } from "@tracebridge/http"
import { Effect, Option } from "effect"

export interface Answer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly body: any
  /** The session cookie this answer set (undefined: none; "" when cleared). */
  readonly cookie: string | undefined
  readonly setCookie: string
}

/** Every answer's text, for the secret search. */
export const transcript: Array<{ readonly label: string; readonly text: string }> = []

/** A dashboard call with an optional session cookie and CSRF token. */
export const raw = (
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: {
    readonly json?: unknown
    readonly cookie?: string | undefined
    readonly csrf?: string | undefined
    readonly headers?: Readonly<Record<string, string>>
    readonly token?: string
  } = {}
) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    let request = HttpClientRequest.make(method)(path)
    if (options.cookie !== undefined) {
      request = HttpClientRequest.setHeader(request, "cookie", `${DashboardApi.SESSION_COOKIE}=${options.cookie}`)
    }
    if (options.csrf !== undefined) request = HttpClientRequest.setHeader(request, "x-csrf-token", options.csrf)
    if (options.headers !== undefined) request = HttpClientRequest.setHeaders(request, options.headers)
    if (options.token !== undefined) request = HttpClientRequest.bearerToken(request, options.token)
    if (options.json !== undefined) request = HttpClientRequest.bodyUnsafeJson(request, options.json)
    const response = yield* client.execute(request)
    const text = yield* response.text
    const setCookie = String(response.headers["set-cookie"] ?? "")
    const match = new RegExp(`${DashboardApi.SESSION_COOKIE}=([^;]*)`).exec(setCookie)
    transcript.push({
      label: `${method} ${path} ${response.status}`,
      text: `${JSON.stringify(response.headers)}\n${text}`
    })
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: text === "" ? null : (response.headers["content-type"] ?? "").includes("json") ? JSON.parse(text) : text,
      cookie: match === null ? undefined : match[1],
      setCookie
    } satisfies Answer
  }).pipe(Effect.scoped)

/** A signed-in member: the cookie's value, the CSRF token, and who they are. */
export interface Member {
  readonly email: string
  readonly password: string
  readonly cookie: string
  readonly csrf: string
  readonly userId: string
  readonly organisationId: string
}

const signedIn = (email: string, password: string, answer: Answer): Member => {
  if (answer.status !== 200 || answer.cookie === undefined) {
    throw new Error(`sign-in of ${email} answered ${answer.status}: ${answer.text}`)
  }
  return {
    email,
    password,
    cookie: answer.cookie,
    csrf: answer.body.csrf_token,
    userId: answer.body.user.id,
    organisationId: answer.body.organisation.id
  }
}

/** The token of an invitation link. */
export const tokenOf = (link: string) => new URL(link).searchParams.get("token")!

/** Accepts an invitation link as a new user. */
export const accept = (link: string, email: string, password = `pw-${email}-long-enough`) =>
  Effect.map(
    raw("POST", "/dashboard/api/invitations/accept", { json: { token: tokenOf(link), email, password } }),
    (answer) => signedIn(email, password, answer)
  )

/** Signs in with a password (and a TOTP code). */
export const signIn = (email: string, password: string, totp_code?: string) =>
  Effect.map(
    raw("POST", "/dashboard/api/session", {
      json: { email, password, ...(totp_code === undefined ? {} : { totp_code }) }
    }),
    (answer) => signedIn(email, password, answer)
  )

/** An organisation's first owner, from the CLI's invitation function. */
export const firstOwner = (organisationId: string, email: string) =>
  Effect.flatMap(Bootstrap.invite(organisationId, email, "owner"), ({ link }) => accept(link, email))

/** A member of another role, invited by `by` through the API, then accepted. */
export const invited = (by: Member, email: string, role: DashboardApi.Role) =>
  Effect.gen(function*() {
    const answer = yield* raw("POST", "/dashboard/api/invitations", {
      cookie: by.cookie,
      csrf: by.csrf,
      json: { email, role }
    })
    if (answer.status !== 200) throw new Error(`invite answered ${answer.status}: ${answer.text}`)
    return yield* accept(answer.body.link, email)
  })

/** The typed client of the internal API, as the pages will use it, for a member. */
export const clientFor = (member: Member) =>
  HttpApiClient.make(DashboardApi.DashboardApi, {
    transformClient: HttpClient.mapRequest((request) =>
      HttpClientRequest.setHeaders(request, {
        cookie: `${DashboardApi.SESSION_COOKIE}=${member.cookie}`,
        "x-csrf-token": member.csrf
      })
    )
  })

/** The token endpoint's answer for a client's credentials. */
export const tokenFor = (client_id: string, client_secret: string) =>
  raw("POST", "/v1/oauth/token", { json: { grant_type: "client_credentials", client_id, client_secret } })

/** The first start's owner: the start banner's link, accepted as `email`. */
export const firstStartOwner = (email: string) =>
  Effect.gen(function*() {
    const start = Option.getOrThrow(yield* Bootstrap.firstStart)
    return yield* accept((yield* Bootstrap.firstOwnerLink(start.client_id))!, email)
  })

/**
 * The first start's owner (as `email`), the typed client as that owner, an API key made on the
 * page, and an access token of that key: where most dashboard tests begin.
 */
export const ownerWithKeyAs = (email: string) =>
  Effect.gen(function*() {
    const owner = yield* firstStartOwner(email)
    const dashboard = yield* clientFor(owner)
    const key = yield* dashboard.keys.create()
    const token = yield* tokenFor(key.client_id, key.client_secret)
    return { owner, dashboard, key, access: token.body.access_token as string }
  })

/** `ownerWithKeyAs` owner@example.com. */
export const ownerWithKey = ownerWithKeyAs("owner@example.com")
