/**
 * Redirects and framing (issue #28, items 8 and 9) against the built server: a malformed
 * `redirect_uri` is a 400 at link token creation (never a 500 later), production takes only
 * https, an organisation's allowed redirect origins refuse any other, and the Connect page's
 * `frame-ancestors` is never `*` nor widened by a `parent_origin` in the query.
 */
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { AbuseServer, Suite } from "./Harness.js"
import { startServer } from "./Harness.js"

interface ErrorBody {
  readonly error: { readonly type: string; readonly code: string; readonly param?: string; readonly message: string }
}
interface LinkBody {
  readonly data: { readonly link_token: string }
}

const frameAncestors = (csp: unknown) => /frame-ancestors ([^;]*)/.exec(String(csp ?? ""))?.[1]?.trim() ?? ""

export const suite: Suite = (backend) =>
  describe.sequential(`redirects and framing on ${backend}`, () => {
    let server: AbuseServer
    let token: string
    const create = (json: Record<string, unknown>) => server.call("POST", "/v1/link/token/create", { token, json })
    const refusedAsRedirect = async (redirect_uri: string) => {
      const answer = await create({ redirect_uri })
      assert.strictEqual(answer.status, 400, `${redirect_uri}: ${answer.text}`)
      const body = answer.body as ErrorBody
      assert.strictEqual(body.error.type, "validation_error", redirect_uri)
      assert.strictEqual(body.error.code, "invalid_parameter", redirect_uri)
      assert.strictEqual(body.error.param, "redirect_uri", redirect_uri)
    }
    const created = async (redirect_uri: string) => {
      const answer = await create({ redirect_uri })
      assert.strictEqual(answer.status, 200, `${redirect_uri}: ${answer.text}`)
      return (answer.body as LinkBody).data.link_token
    }
    const ancestorsOf = async (linkToken: string) => {
      const page = await server.call(
        "GET",
        `/connect?link_token=${encodeURIComponent(linkToken)}&parent_origin=${
          encodeURIComponent("https://evil.example")
        }`
      )
      assert.strictEqual(page.status, 200, page.text)
      const ancestors = frameAncestors(page.headers["content-security-policy"])
      assert.notStrictEqual(ancestors, "", "the page names its frame-ancestors")
      assert.notMatch(ancestors, /(^|\s)\*(\s|$)/, ancestors)
      assert.notInclude(ancestors, "evil.example", ancestors)
      return ancestors
    }

    beforeAll(async () => {
      server = await startServer(backend, "redirects")
      token = await server.accessToken()
    }, 60_000)
    afterAll(() => server?.close(), 30_000)

    it("a malformed redirect_uri is a 400 at creation, and nothing 500s", async () => {
      for (
        const bad of [
          "http://[::1/",
          "https://user:secret@app.example/back",
          "https://app.example/back#fragment",
          "http://app.example/back",
          "javascript:alert(1)//"
        ]
      ) await refusedAsRedirect(bad)
      // the sandbox takes loopback http, as a quickstart on localhost needs
      const loopback = await created("http://localhost:3000/done")
      const session = await server.call("GET", `/connect/session?link_token=${encodeURIComponent(loopback)}`)
      assert.strictEqual(session.status, 200, session.text)
      const ancestors = await ancestorsOf(loopback)
      assert.include(ancestors, "http://localhost:3000")
      assert.include(ancestors, "'self'")
    }, 60_000)

    it("an organisation's allowed redirect origins refuse any other origin, and frame the page", async () => {
      const bad = await server.cli(["set-redirect-origins", server.organisationId, "https://app.example/path"])
      assert.notStrictEqual(bad.code, 0, "an origin with a path is refused")
      const set = await server.cli(["set-redirect-origins", server.organisationId, "https://app.example"])
      assert.strictEqual(set.code, 0, set.stderr + set.stdout)
      await refusedAsRedirect("https://other.example/back")
      await refusedAsRedirect("http://localhost:3000/done")
      const linkToken = await created("https://app.example/back?step=done")
      const ancestors = await ancestorsOf(linkToken)
      assert.include(ancestors, "https://app.example")
      assert.notInclude(ancestors, "other.example")
      const cleared = await server.cli(["set-redirect-origins", server.organisationId])
      assert.strictEqual(cleared.code, 0, cleared.stderr)
      await created("https://other.example/back")
    }, 60_000)

    it("production refuses http:// (loopback included) and accepts https://", async () => {
      const plan = await server.cli(["set-plan", server.organisationId, "production"])
      assert.strictEqual(plan.code, 0, plan.stderr)
      token = await server.accessToken()
      await refusedAsRedirect("http://app.example/back")
      await refusedAsRedirect("http://localhost:3000/done")
      await refusedAsRedirect("http://[::1/")
      const linkToken = await created("https://app.example/back")
      assert.match(linkToken, /^link-production-/)
      const ancestors = await ancestorsOf(linkToken)
      assert.notInclude(ancestors, "localhost", "production is not framed from loopback")
      assert.include(ancestors, "https://app.example")
    }, 60_000)
  })
