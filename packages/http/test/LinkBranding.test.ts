/**
 * DECISIONS "Connect widget branding": `POST /v1/link/token/create` takes `client_name` (1–64
 * characters, default the organisation's name) and `logo_url` (https only), keeps them with the
 * link token, and the Connect page reads them from its session. The page's CSP lets https images
 * in for the logo and loosens nothing else.
 */
import { HttpClient } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Accounts } from "../src/persistence/Accounts.js"
import { LinkTokens } from "../src/persistence/LinkTokens.js"
import * as Crypto from "../src/services/Crypto.js"
import { call, signIn, TestApp } from "./support/TestApp.js"

const create = (access: string, json: Record<string, unknown>) =>
  call("POST", "/v1/link/token/create", { token: access, json })

const session = (linkToken: string) => call("GET", `/connect/session?link_token=${encodeURIComponent(linkToken)}`)

describe("Connect widget branding", () => {
  it.effect("keeps client_name and logo_url with the link token and shows them to the page", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const created = yield* create(me.access, {
        client_name: "Acme Retail",
        logo_url: "https://acme.example/logo.png?v=2"
      })
      assert.strictEqual(created.status, 200)
      const token = created.body.data.link_token as string
      const linkTokens = yield* LinkTokens
      const stored = Option.getOrThrow(yield* linkTokens.getLinkToken(Crypto.hash(token)))
      assert.strictEqual(stored.client_name, "Acme Retail")
      assert.strictEqual(stored.logo_url, "https://acme.example/logo.png?v=2")
      const opened = yield* session(token)
      assert.strictEqual(opened.status, 200)
      assert.strictEqual(opened.body.data.client_name, "Acme Retail")
      assert.strictEqual(opened.body.data.logo_url, "https://acme.example/logo.png?v=2")
    }).pipe(Effect.provide(TestApp)))

  it.effect("defaults client_name to the organisation's name, with no logo", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const accounts = yield* Accounts
      const token = (yield* create(me.access, {})).body.data.link_token as string
      const stored = Option.getOrThrow(yield* (yield* LinkTokens).getLinkToken(Crypto.hash(token)))
      const organisation = Option.getOrThrow(yield* accounts.getOrganisation(stored.organisation_id))
      assert.isAbove(organisation.name.length, 0)
      assert.strictEqual(stored.client_name, organisation.name)
      assert.isNull(stored.logo_url)
      const opened = yield* session(token)
      assert.strictEqual(opened.body.data.client_name, organisation.name)
      assert.isNull(opened.body.data.logo_url)
      // a link token stored before the branding was kept falls back to the organisation's name
      const old = Crypto.token("link-sandbox-")
      yield* (yield* LinkTokens).insertLinkToken({ ...stored, hash: Crypto.hash(old), client_name: null })
      assert.strictEqual((yield* session(old)).body.data.client_name, organisation.name)
    }).pipe(Effect.provide(TestApp)))

  it.effect("accepts client_name of 1 and of 64 characters", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      for (const name of ["A", "x".repeat(64), "Café “Über” & <Söhne>"]) {
        const created = yield* create(me.access, { client_name: name })
        assert.strictEqual(created.status, 200, name)
        assert.strictEqual((yield* session(created.body.data.link_token)).body.data.client_name, name)
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("refuses a bad client_name or logo_url with 400 invalid_parameter naming it", () =>
    Effect.gen(function*() {
      const me = yield* signIn
      const refused: ReadonlyArray<readonly [string, unknown]> = [
        ["client_name", ""],
        ["client_name", "x".repeat(65)],
        ["client_name", "   "],
        ["client_name", 42],
        ["logo_url", "http://acme.example/logo.png"],
        ["logo_url", "javascript:alert(1)"],
        ["logo_url", "data:image/png;base64,AAAA"],
        ["logo_url", "//acme.example/logo.png"],
        ["logo_url", "https://"],
        ["logo_url", "https://acme.example/a b.png"],
        ["logo_url", "https://acme.example/\"><script>alert(1)</script>"],
        ["logo_url", "https://user:pass@acme.example/logo.png"],
        ["logo_url", `https://acme.example/${"a".repeat(2000)}`]
      ]
      for (const [param, value] of refused) {
        const answer = yield* create(me.access, { [param]: value })
        assert.strictEqual(answer.status, 400, `${param}=${String(value)}`)
        assert.strictEqual(answer.body.error.type, "validation_error")
        assert.strictEqual(answer.body.error.code, "invalid_parameter")
        assert.strictEqual(answer.body.error.param, param, `${param}=${String(value)}`)
        assert.isString(answer.body.error.message)
        assert.strictEqual(answer.body.error.request_id, answer.headers["x-request-id"])
      }
    }).pipe(Effect.provide(TestApp)))

  it.effect("the page's CSP allows https images for the logo and nothing more", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const html = yield* client.get("/connect?link_token=x").pipe(Effect.scoped)
      assert.strictEqual(html.status, 200)
      assert.strictEqual(
        html.headers["content-security-policy"],
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src https:; frame-ancestors 'self'; form-action 'none'; base-uri 'none'"
      )
    }).pipe(Effect.provide(TestApp)))

  it.effect("the OpenAPI document describes client_name and logo_url", () =>
    Effect.gen(function*() {
      const doc = (yield* call("GET", "/v1/openapi.json")).body
      const schema = doc.components.schemas.LinkTokenCreate
      assert.strictEqual(schema.properties.client_name.maxLength, 64)
      assert.strictEqual(schema.properties.client_name.minLength, 1)
      assert.include(schema.properties.client_name.description, "organisation's name")
      assert.include(schema.properties.logo_url.description, "https")
      assert.strictEqual(schema.properties.logo_url.pattern, "^https://")
    }).pipe(Effect.provide(TestApp)))
})
