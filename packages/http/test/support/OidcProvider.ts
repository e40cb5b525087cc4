/**
 * A real OpenID provider for the single sign-on tests (`oidc-provider`, on a loopback port): one
 * client (the dashboard), PKCE required, its development login form (any password; the login is
 * the account). An account's e-mail is its login, verified unless the login starts with
 * `unverified`. The ID token carries `sub` only; the e-mail comes from the userinfo endpoint, as
 * with many providers. Consent is granted without a prompt.
 */
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import Provider from "oidc-provider"

export const CLIENT_ID = "tracebridge-dashboard"
export const CLIENT_SECRET = "oidc-client-secret-7f3a9c1e5b2d4f60"

export interface TestProvider {
  readonly issuer: string
  readonly close: () => Promise<void>
}

/** Starts the provider; `redirectUris` are the client's registered redirect URLs. */
export const start = async (redirectUris: ReadonlyArray<string>): Promise<TestProvider> => {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const provider = new Provider(issuer, {
    clients: [{
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      redirect_uris: [...redirectUris],
      grant_types: ["authorization_code"],
      response_types: ["code"]
    }],
    pkce: { required: () => true },
    claims: { openid: ["sub"], email: ["email", "email_verified"] },
    findAccount: (_ctx, id) => ({
      accountId: id,
      claims: () => ({ sub: id, email: id, email_verified: !id.startsWith("unverified") })
    }),
    loadExistingGrant: async (ctx) => {
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client!.clientId,
        accountId: ctx.oidc.session!.accountId!
      })
      grant.addOIDCScope("openid email")
      await grant.save()
      return grant
    },
    ttl: { Interaction: 600, Grant: 600, Session: 600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: true } }
  })
  server.on("request", provider.callback())
  return {
    issuer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/**
 * A browser at the provider: follows its redirects from the authorization URL, signs in as
 * `login` on its form, and stops at the redirect back to us; answers that address.
 */
export const authorize = async (authorizationUrl: string, login: string, stopAt: string): Promise<string> => {
  const jar = new Map<string, string>()
  const go = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(url, {
      ...init,
      headers: {
        ...(init.headers as Record<string, string>),
        cookie: [...jar].map(([k, v]) => `${k}=${v}`).join("; ")
      },
      redirect: "manual"
    })
    for (const c of response.headers.getSetCookie()) {
      const [pair] = c.split(";")
      const i = pair!.indexOf("=")
      jar.set(pair!.slice(0, i), pair!.slice(i + 1))
    }
    return response
  }
  let response = await go(authorizationUrl)
  for (let i = 0; i < 12; i++) {
    const location = response.headers.get("location")
    if (response.status >= 300 && response.status < 400 && location !== null) {
      const next = new URL(location, authorizationUrl).href
      if (next.startsWith(stopAt)) return next
      response = await go(next)
      continue
    }
    const html = await response.text()
    const action = /action="([^"]+)"/.exec(html)?.[1]
    if (action === undefined) throw new Error(`the provider answered ${response.status}: ${html.slice(0, 500)}`)
    response = await go(new URL(action, authorizationUrl).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(
        html.includes(`name="login"`) ? { prompt: "login", login, password: "any" } : { prompt: "consent" }
      ).toString()
    })
  }
  throw new Error("the provider never redirected back")
}
