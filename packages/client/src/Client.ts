/**
 * The Tracebridge client: typed calls of every `/v1` operation (paths, parameters, bodies and
 * answers all come from the OpenAPI document), on plain `fetch` through `openapi-fetch`, with:
 *
 * - tokens: the client-credentials grant, refreshed with the refresh grant before the access token
 *   expires or when the API answers 401 `token_expired`, once for all concurrent calls; or a fixed
 *   token (an access token or a connection token `tb_ct_…`);
 * - typed errors ({@link TracebridgeError}, {@link OAuthError});
 * - retries of 429, 503 and 504 honouring `Retry-After`, for requests safe to send again;
 * - an `Idempotency-Key` on every POST and PATCH (yours, or `crypto.randomUUID()`), the same on
 *   every retry;
 * - paging iterators over every item of a list.
 *
 * ```ts
 * const tb = new Tracebridge({ baseUrl: "http://127.0.0.1:4000", clientId, clientSecret })
 * const P = { connection_id, facility_id }
 * for await (const pkg of tb.paginate("/v1/connections/{connection_id}/facilities/{facility_id}/packages", {
 *   params: { path: P, query: { per_page: 100 } }
 * })) console.log(pkg.tag, pkg.quantity, pkg.unit_of_measure)
 * ```
 *
 * @since 0.1.0
 */
import type { Client as FetchClient, FetchOptions } from "openapi-fetch"
import createFetchClient from "openapi-fetch"
import { fromResponse, OAuthError } from "./Errors.js"
import type { components, paths } from "./generated/openapi.js"
import type { RetryOptions } from "./Retry.js"
import { delayFor, isRetryable, parseRetryAfter, sleep as defaultSleep } from "./Retry.js"

/**
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** The API's origin, e.g. `https://api.example.com` (no `/v1`). */
  readonly baseUrl: string
  /** Client credentials: the SDK gets, refreshes and renews access tokens itself. */
  readonly clientId?: string
  readonly clientSecret?: string
  /** Scopes asked for with the client credentials (space-separated, e.g. `"sandbox"`). */
  readonly scope?: string
  /** A fixed bearer token instead: an access token (`tb_at_…`) or a connection token (`tb_ct_…`). */
  readonly token?: string
  /** Refresh the access token this many seconds before it expires (default 60). */
  readonly refreshMarginSeconds?: number
  /** Retries (default 3 attempts in all); `false` turns them off. */
  readonly retry?: RetryOptions | false
  /** Add an `Idempotency-Key` to every POST and PATCH that has none (default true). */
  readonly idempotencyKeys?: boolean
  /** The `fetch` to use (default `globalThis.fetch`). */
  readonly fetch?: (input: Request) => Promise<Response>
  /** The time now in milliseconds (default `Date.now`), for tests. */
  readonly now?: () => number
  /** Headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>
}

/**
 * What the SDK adds to a call's options: an idempotency key of your own (a write sent again with the
 * same key is answered once; see DECISIONS "Idempotency scope").
 *
 * @since 0.1.0
 * @category models
 */
export interface CallOptions {
  readonly idempotencyKey?: string
}

/**
 * @since 0.1.0
 * @category models
 */
export type HttpMethod = "get" | "put" | "post" | "delete" | "patch"

/**
 * The paths that have an operation for a method.
 *
 * @since 0.1.0
 * @category models
 */
export type PathsWithMethod<Paths, M extends HttpMethod> = {
  [P in keyof Paths]: Paths[P] extends Record<M, { responses: any }> ? P : never
}[keyof Paths]

type RequiredKeys<T> = { [K in keyof T]-?: {} extends Pick<T, K> ? never : K }[keyof T]

type Init<Path, M extends HttpMethod> = Path extends Record<M, infer Op> ? FetchOptions<Op> & CallOptions
  : never

/**
 * The options argument of a call: optional when the operation needs nothing.
 *
 * @since 0.1.0
 * @category models
 */
export type CallArgs<Path, M extends HttpMethod> = RequiredKeys<Init<Path, M>> extends never ? [init?: Init<Path, M>]
  : [init: Init<Path, M>]

type SuccessStatus = 200 | 201 | 202 | 203 | 204

/**
 * The JSON body of an operation's success answer.
 *
 * @since 0.1.0
 * @category models
 */
export /** What every list answer carries, whatever its items. */
interface Paged {
  readonly data: ReadonlyArray<unknown>
  readonly pagination: { readonly page: number; readonly total_pages: number }
}

type SuccessBody<Op> = Op extends { responses: infer R }
  ? R[Extract<keyof R, SuccessStatus>] extends infer S
    ? S extends { content: { "application/json": infer J } } ? J : undefined
  : never
  : never

/** The token endpoint's body: one of the two grants. */
type TokenRequest = components["schemas"]["ClientCredentialsGrant"] | components["schemas"]["RefreshTokenGrant"]

/** openapi-fetch's `request` without the document's types (the public methods state them). */
type UntypedRequest = (
  method: HttpMethod,
  path: string,
  init: object
) => Promise<{ readonly data?: unknown; readonly error?: unknown; readonly response: Response }>

type GetOp<P extends keyof paths> = paths[P] extends { get: infer Op } ? Op : never

/**
 * A page of a facility's change feed.
 *
 * @since 0.1.0
 * @category models
 */
export type ChangesPage = components["schemas"]["Changes"]

/**
 * The list paths: GET operations whose answer has `pagination`.
 *
 * @since 0.1.0
 * @category models
 */
export type ListPath = {
  [P in PathsWithMethod<paths, "get">]: SuccessBody<GetOp<P>> extends { pagination: any } ? P : never
}[PathsWithMethod<paths, "get">]

/**
 * An item of a list path.
 *
 * @since 0.1.0
 * @category models
 */
export type ListItem<P extends ListPath> = SuccessBody<GetOp<P>> extends { data: ReadonlyArray<infer I> } ? I : never

interface Token {
  readonly access: string
  readonly refresh: string | undefined
  readonly expiresAt: number
}

const TOKEN_PATH = "/v1/oauth/token"

/**
 * A random (version 4) UUID: `crypto.randomUUID()`, or the same from `crypto.getRandomValues` where
 * `randomUUID` is missing (browsers offer it only in secure contexts).
 */
const randomKey = (): string => {
  if (typeof globalThis.crypto.randomUUID === "function") return globalThis.crypto.randomUUID()
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16))
  bytes[6] = (bytes[6]! & 0x0f) | 0x40
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * The Tracebridge API client.
 *
 * @since 0.1.0
 * @category client
 */
export class Tracebridge {
  /**
   * The underlying `openapi-fetch` client, with the SDK's tokens, retries and idempotency keys:
   * its calls answer `{ data, error, response }` instead of throwing.
   */
  readonly raw: FetchClient<paths, "application/json">
  readonly #options: ClientOptions
  readonly #fetch: (input: Request) => Promise<Response>
  readonly #now: () => number
  readonly #baseUrl: string
  #token: Token | undefined
  #renewing: Promise<Token> | undefined
  #issued = 0

  constructor(options: ClientOptions) {
    if (options.token === undefined && (options.clientId === undefined || options.clientSecret === undefined)) {
      throw new TypeError("Tracebridge: pass clientId and clientSecret, or a token")
    }
    this.#options = options
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "")
    this.#fetch = options.fetch ?? ((input) => globalThis.fetch(input))
    this.#now = options.now ?? Date.now
    this.raw = createFetchClient<paths, "application/json">({
      baseUrl: this.#baseUrl,
      fetch: (request) => this.#send(request),
      ...(options.headers === undefined ? {} : { headers: options.headers })
    })
  }

  /** GET: the answer's JSON body, or a thrown {@link TracebridgeError}. */
  get<P extends PathsWithMethod<paths, "get">>(
    path: P,
    ...init: CallArgs<paths[P], "get">
  ): Promise<SuccessBody<GetOp<P>>> {
    return this.#call("get", path, init[0])
  }

  /** POST (with an `Idempotency-Key`: `init.idempotencyKey` or a new UUID). */
  post<P extends PathsWithMethod<paths, "post">>(
    path: P,
    ...init: CallArgs<paths[P], "post">
  ): Promise<SuccessBody<paths[P] extends { post: infer Op } ? Op : never>> {
    return this.#call("post", path, init[0])
  }

  /** PATCH (with an `Idempotency-Key`, like POST). */
  patch<P extends PathsWithMethod<paths, "patch">>(
    path: P,
    ...init: CallArgs<paths[P], "patch">
  ): Promise<SuccessBody<paths[P] extends { patch: infer Op } ? Op : never>> {
    return this.#call("patch", path, init[0])
  }

  /** PUT. */
  put<P extends PathsWithMethod<paths, "put">>(
    path: P,
    ...init: CallArgs<paths[P], "put">
  ): Promise<SuccessBody<paths[P] extends { put: infer Op } ? Op : never>> {
    return this.#call("put", path, init[0])
  }

  /** DELETE. */
  delete<P extends PathsWithMethod<paths, "delete">>(
    path: P,
    ...init: CallArgs<paths[P], "delete">
  ): Promise<SuccessBody<paths[P] extends { delete: infer Op } ? Op : never>> {
    return this.#call("delete", path, init[0])
  }

  /**
   * Every page of a list, from `query.page` (default 1) to the last one, as the API answers them
   * (`data`, `meta`, `pagination`).
   */
  async *pages<P extends ListPath>(
    path: P,
    ...init: CallArgs<paths[P], "get">
  ): AsyncGenerator<SuccessBody<GetOp<P>>, void, undefined> {
    const options: { readonly params?: { readonly query?: { readonly page?: unknown } } } = init[0] ?? {}
    let page: number = Number(options.params?.query?.page ?? 1)
    for (;;) {
      const params = { ...options.params, query: { ...options.params?.query, page } }
      const answer: unknown = await this.#call("get", path, { ...options, params })
      yield answer as SuccessBody<GetOp<P>>
      const { data, pagination } = answer as Paged
      if (data.length === 0 || pagination.page >= pagination.total_pages) return
      page = pagination.page + 1
    }
  }

  /** Every item of a list, across pages (`query.per_page` sets the page size, up to 100). */
  async *paginate<P extends ListPath>(
    path: P,
    ...init: CallArgs<paths[P], "get">
  ): AsyncGenerator<ListItem<P>, void, undefined> {
    for await (const page of this.pages(path, ...init)) {
      yield* (page as { data: ReadonlyArray<ListItem<P>> }).data
    }
  }

  /**
   * A facility's change feed (`GET P/changes`), page after page from `query.cursor` (or the
   * beginning) while `meta.has_more`. Store each page's `meta.next_cursor` once you have handled
   * the page: the next call from it gets every later change once, and nothing you already have.
   *
   * While the facility is still filling (`meta.sync.status` `backfilling`), the API answers
   * `has_more: true` even when it has nothing more stored yet; the iterator then waits
   * `query.waitMs` (default 2000 ms, the API's `Retry-After`) before it asks again, so it ends only
   * once the facility is up to date.
   */
  async *changePages(
    facility: { readonly connection_id: string; readonly facility_id: string },
    query: {
      readonly cursor?: string
      readonly limit?: number
      readonly types?: string
      readonly waitMs?: number
    } = {}
  ): AsyncGenerator<ChangesPage, void, undefined> {
    let cursor = query.cursor
    for (;;) {
      const body: ChangesPage = await this.#call(
        "get",
        "/v1/connections/{connection_id}/facilities/{facility_id}/changes",
        {
          params: {
            path: facility,
            query: {
              ...(cursor === undefined ? {} : { cursor }),
              ...(query.limit === undefined ? {} : { limit: query.limit }),
              ...(query.types === undefined ? {} : { types: query.types })
            }
          }
        }
      )
      yield body
      if (!body.meta.has_more) return
      cursor = body.meta.next_cursor
      // still filling, and nothing more stored yet: ask again after a while
      if (body.data.length === 0) await defaultSleep(query.waitMs ?? 2_000)
    }
  }

  /**
   * Every change of a facility's feed from `query.cursor` (or the beginning) to its end: while the
   * facility fills, it waits for the rest (`changePages`).
   */
  async *changes(
    facility: { readonly connection_id: string; readonly facility_id: string },
    query: {
      readonly cursor?: string
      readonly limit?: number
      readonly types?: string
      readonly waitMs?: number
    } = {}
  ): AsyncGenerator<components["schemas"]["Change"], void, undefined> {
    for await (const page of this.changePages(facility, query)) yield* page.data
  }

  /** How many access tokens this client has obtained (client credentials and refreshes). */
  get tokensIssued(): number {
    return this.#issued
  }

  /** The current access token, getting or refreshing one first if needed (client credentials only). */
  async accessToken(): Promise<string> {
    if (this.#options.token !== undefined) return this.#options.token
    const token = this.#token
    const margin = (this.#options.refreshMarginSeconds ?? 60) * 1000
    if (token !== undefined && this.#now() < token.expiresAt - margin) return token.access
    return (await this.#renew(token)).access
  }

  /** Gets a new access token now (refresh grant, else client credentials), unless another call already did. */
  async #renew(stale: Token | undefined): Promise<Token> {
    if (this.#renewing !== undefined) return this.#renewing
    if (this.#token !== stale && this.#token !== undefined) return this.#token
    this.#renewing = (async () => {
      try {
        if (stale?.refresh !== undefined) {
          try {
            return this.#keep(await this.#tokenRequest({ grant_type: "refresh_token", refresh_token: stale.refresh }))
          } catch (e) {
            // A refresh token that expired or was revoked: start again with the client credentials.
            if (!(e instanceof OAuthError && e.error === "invalid_grant")) throw e
          }
        }
        return this.#keep(
          await this.#tokenRequest({
            grant_type: "client_credentials",
            client_id: this.#options.clientId!,
            client_secret: this.#options.clientSecret!,
            ...(this.#options.scope === undefined ? {} : { scope: this.#options.scope })
          })
        )
      } finally {
        this.#renewing = undefined
      }
    })()
    return this.#renewing
  }

  #keep(answer: { access_token: string; expires_in: number; refresh_token?: string }): Token {
    this.#issued++
    this.#token = {
      access: answer.access_token,
      refresh: answer.refresh_token,
      expiresAt: this.#now() + answer.expires_in * 1000
    }
    return this.#token
  }

  async #tokenRequest(body: TokenRequest) {
    const { data, error, response } = await this.raw.POST(TOKEN_PATH, { body })
    if (data !== undefined) return data
    throw fromResponse(response.status, error, response.headers)
  }

  async #call(method: HttpMethod, path: string, init: any): Promise<any> {
    const { idempotencyKey, ...rest } = init ?? {}
    const options = idempotencyKey === undefined
      ? rest
      : { ...rest, headers: { ...rest.headers, "Idempotency-Key": idempotencyKey } }
    // The public methods check the path, parameters and body against the document; here they are
    // one call of openapi-fetch's `request`, as its untyped form.
    const request = this.raw.request as unknown as UntypedRequest
    const { data, error, response } = await request(method, path, options)
    if (response.ok) return data
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), this.#now())
    throw fromResponse(
      response.status,
      error,
      response.headers,
      retryAfterMs === undefined ? undefined : retryAfterMs / 1000
    )
  }

  /** The `fetch` behind `raw`: bearer token, idempotency key, retries and the 401 `token_expired` refresh. */
  async #send(request: Request): Promise<Response> {
    const url = new URL(request.url)
    const isTokenRequest = url.pathname === TOKEN_PATH
    const headers = new Headers(request.headers)
    const method = request.method.toUpperCase()
    if (
      !isTokenRequest && (method === "POST" || method === "PATCH") && this.#options.idempotencyKeys !== false &&
      !headers.has("idempotency-key")
    ) {
      headers.set("Idempotency-Key", randomKey())
    }
    const body = method === "GET" || method === "HEAD" ? undefined : await request.arrayBuffer()
    const retry = this.#options.retry === false ? { maxAttempts: 1 } : (this.#options.retry ?? {})
    const maxAttempts = Math.max(1, retry.maxAttempts ?? 3)
    const statuses = retry.statuses ?? [429, 503, 504]
    const sleep = retry.sleep ?? defaultSleep
    // A token request is sent again only for a 429 (refused before it was read): a refresh token
    // rotates on use, so a refresh grant that may have run must not run twice.
    const retryable = isTokenRequest ? false : isRetryable(method, headers)
    const managed = !isTokenRequest && this.#options.token === undefined && !headers.has("authorization")
    let refreshed = false
    for (let attempt = 1;; attempt++) {
      let token: Token | undefined
      if (managed) {
        await this.accessToken()
        token = this.#token!
        headers.set("Authorization", `Bearer ${token.access}`)
      } else if (!isTokenRequest && this.#options.token !== undefined && !headers.has("authorization")) {
        headers.set("Authorization", `Bearer ${this.#options.token}`)
      }
      const init: RequestInit = { method, headers, signal: request.signal, redirect: request.redirect }
      if (body !== undefined) init.body = body
      let response: Response
      try {
        response = await this.#fetch(new Request(url, init))
      } catch (e) {
        if (retryable && attempt < maxAttempts && !request.signal.aborted) {
          await sleep(delayFor(attempt, undefined, retry))
          continue
        }
        throw e
      }
      if (managed && response.status === 401 && !refreshed) {
        const code = await response.clone().json().then((b: any) => b?.error?.code, () => undefined)
        if (code === "token_expired") {
          refreshed = true
          await this.#renew(token)
          attempt--
          continue
        }
      }
      const again = statuses.includes(response.status) && attempt < maxAttempts &&
        (retryable || (isTokenRequest && response.status === 429))
      if (!again) return response
      const wait = delayFor(attempt, parseRetryAfter(response.headers.get("retry-after"), this.#now()), retry)
      await response.body?.cancel()
      await sleep(wait)
    }
  }
}

/**
 * A client; the same as `new Tracebridge(options)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const createClient = (options: ClientOptions): Tracebridge => new Tracebridge(options)
