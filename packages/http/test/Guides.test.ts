/**
 * What the guides in `docs/guides/` show is what the service does: the webhooks guide's plain-Node
 * verifier, taken from the guide as written, accepts what Tracebridge signs and refuses the rest.
 * (The getting-started session runs in ReadmeSession.test.ts; the page in Docs.test.ts.)
 */
import { OpenApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { Api } from "@tracebridge/api"
import { WebhookSignature } from "@tracebridge/core"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { call, linkSandbox, signIn, TestApp } from "./support/TestApp.js"

const guide = readFileSync(fileURLToPath(new URL("../../../docs/guides/webhooks.md", import.meta.url)), "utf8")

type Verify = (raw: string, header: string | undefined, secrets: Array<string>, toleranceSeconds?: number) => boolean

describe("guides", () => {
  it.effect("the webhooks guide's plain-Node verifier accepts Tracebridge's signatures and refuses the rest", () =>
    Effect.gen(function*() {
      const blocks = [...guide.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!)
      const snippet = blocks.find((b) => b.includes("createHmac"))
      assert.isDefined(snippet, "the guide has a verifier without the package")
      const file = join(mkdtempSync(join(tmpdir(), "tb-guide-")), "verify.mjs")
      writeFileSync(file, snippet!)
      const { verify } = (yield* Effect.promise(() => import(pathToFileURL(file).href))) as { verify: Verify }

      const secret = "whsec_guide_test_0123456789"
      const old = "whsec_guide_old_9876543210"
      const body = JSON.stringify({ id: "evt_1", type: "lab_result.received", data: { passed: false } })
      const now = Math.floor(Date.now() / 1000)
      const header = yield* WebhookSignature.sign([secret], now, body)
      assert.isTrue(verify(body, header, [secret]))
      // during a rotation: one v1= per live secret, either secret verifies
      const rotating = yield* WebhookSignature.sign([secret, old], now, body)
      assert.isTrue(verify(body, rotating, [old]))
      assert.isTrue(verify(body, rotating, ["whsec_other", secret]))
      // refused: another body, another secret, a stale or missing timestamp, no header
      assert.isFalse(verify(body + " ", header, [secret]))
      assert.isFalse(verify(body, header, ["whsec_other"]))
      assert.isFalse(verify(body, yield* WebhookSignature.sign([secret], now - 301, body), [secret]))
      assert.isFalse(verify(body, header.replace(/^t=\d+,/, ""), [secret]))
      assert.isFalse(verify(body, undefined, [secret]))
      // the package's verifier agrees on the same header
      const event = yield* Effect.promise(() =>
        WebhookSignature.verifyWebhook(body, header, [secret], { toleranceSeconds: 300 })
      )
      assert.strictEqual((event as { id: string }).id, "evt_1")
    }))
})

describe("the errors guide", () => {
  const errors = readFileSync(fileURLToPath(new URL("../../../docs/guides/errors.md", import.meta.url)), "utf8")

  /** `status → codes` of every error response the OpenAPI document describes, in the `/v1` envelope. */
  const documented = () => {
    const document = OpenApi.fromApi(Api.Api) as unknown as Record<string, any>
    const resolve = (value: any): any =>
      typeof value?.$ref === "string"
        ? resolve(value.$ref.slice(2).split("/").reduce((at: any, key: string) => at?.[key], document))
        : value
    const out = new Map<string, Set<string>>()
    for (const item of Object.values(document.paths) as Array<Record<string, any>>) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries(operation.responses ?? {})) {
          const schema = resolve(resolve(response).content?.["application/json"]?.schema)
          // one status may have several bodies (503: the state system's, or our database's)
          for (const member of (schema?.anyOf ?? [schema]).map(resolve)) {
            const code = resolve(member?.properties?.error?.properties?.code)
            const codes: Array<string> = code?.enum ?? (code?.const === undefined ? [] : [code.const])
            for (const c of codes) out.set(status, (out.get(status) ?? new Set()).add(c))
          }
        }
      }
    }
    return out
  }

  /** `status → codes` of the guide's table (a row may name several statuses: `502 / 503 / 504`). */
  const table = () => {
    const section = errors.slice(errors.indexOf("## The table"), errors.indexOf("## What to do"))
    const out = new Map<string, Set<string>>()
    for (const row of section.split("\n").filter((l) => /^\| \d{3}/.test(l))) {
      const [statuses, , codes] = row.split(" | ")
      for (const status of statuses!.match(/\d{3}/g)!) {
        out.set(status, new Set([...codes!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!)))
      }
    }
    return out
  }

  it("names every error code the OpenAPI document describes, and no code the service does not send", () => {
    const fromDocument = documented()
    assert.isAtLeast(fromDocument.size, 10)
    for (const [status, codes] of fromDocument) {
      for (const code of codes) assert.include(errors, `\`${code}\``, `${status} ${code} is in the guide`)
    }
    const rows = table()
    for (const [status, codes] of rows) {
      for (const code of codes) {
        // 502 / 503 / 504 share a row: a provider code belongs to one of them
        const owners = [...fromDocument].filter(([, set]) => set.has(code)).map(([s]) => s)
        assert.isNotEmpty(owners, `${code} (row ${status}) is not in the OpenAPI document`)
        if (!status.startsWith("50")) assert.include(owners, status, `${code} is a ${owners.join("/")}`)
      }
    }
    for (const code of ["connection_inactive", "write_conflict"]) assert.isTrue(rows.get("409")?.has(code), code)
  })
})

describe("the sandbox, paging and webhooks guides", () => {
  const read = (name: string) =>
    readFileSync(fileURLToPath(new URL(`../../../docs/guides/${name}`, import.meta.url)), "utf8")

  it("the sandbox guide's scenario table is the document's list of scenarios", () => {
    const document = OpenApi.fromApi(Api.Api) as unknown as Record<string, any>
    const scenarios: Array<string> = document.components.schemas.Simulate.properties.scenario.enum
    const guide = read("sandbox.md")
    const section = guide.slice(guide.indexOf("## Simulate events"), guide.indexOf("## Faults"))
    const rows = section.split("\n").filter((l) => /^\| `[a-z_]+` \|/.test(l)).map((l) => /`([a-z_]+)`/.exec(l)![1])
    assert.sameMembers(rows, scenarios)
  })

  it.effect("what the paging and webhooks guides say a call answers, it answers", () =>
    Effect.gen(function*() {
      const paging = read("paging.md")
      const webhooks = read("webhooks.md")
      const me = yield* signIn
      const { connection_id } = yield* linkSandbox(me.access)
      const facilities = yield* call("GET", `/v1/connections/${connection_id}/facilities`, { token: me.access })
      const packages = `/v1/connections/${connection_id}/facilities/${facilities.body.data[0].id}/packages`

      // defaults 1 and 25; the four pagination fields; meta.skipped on every list
      assert.include(paging, "| `page` | `1` |")
      assert.include(paging, "| `per_page` | `25` | an integer from 1 to 100 |")
      const first = yield* call("GET", packages, { token: me.access })
      assert.strictEqual(first.status, 200)
      assert.deepStrictEqual(Object.keys(first.body.pagination).sort(), ["page", "per_page", "total", "total_pages"])
      assert.strictEqual(first.body.pagination.page, 1)
      assert.strictEqual(first.body.pagination.per_page, 25)
      assert.deepStrictEqual(first.body.meta.skipped, [])
      // "A page past the end is an empty `data`, not an error."
      assert.include(paging, "A page past the end is an empty `data`, not an error.")
      const past = yield* call("GET", `${packages}?page=${first.body.pagination.total_pages + 1}&per_page=100`, {
        token: me.access
      })
      assert.strictEqual(past.status, 200)
      assert.deepStrictEqual(past.body.data, [])
      // "A `per_page` above 100 or below 1, or either one not a number, is a 400 … naming it in `param`."
      for (const query of ["per_page=101", "per_page=0", "page=two"]) {
        const refused = yield* call("GET", `${packages}?${query}`, { token: me.access })
        assert.strictEqual(refused.status, 400, query)
        assert.strictEqual(refused.body.error.code, "invalid_parameter")
        assert.strictEqual(refused.body.error.param, query.split("=")[0])
      }

      // a subscription: 201, the secret once, an unknown event a 400 naming events.0
      assert.include(webhooks, "It answers **201**")
      const created = yield* call("POST", "/v1/webhooks/", {
        token: me.access,
        json: {
          url: "http://127.0.0.1:3000/hooks",
          events: ["transfer.arrived", "transfer.completed", "lab_result.received"]
        }
      })
      assert.strictEqual(created.status, 201)
      assert.match(created.body.data.secret, /^whsec_/)
      assert.strictEqual(created.body.data.status, "enabled")
      const again = yield* call("GET", `/v1/webhooks/${created.body.data.id}`, { token: me.access })
      assert.notProperty(again.body.data, "secret")
      const unknown = yield* call("POST", "/v1/webhooks/", {
        token: me.access,
        json: { url: "http://127.0.0.1:3000/hooks", events: ["package.created"] }
      })
      assert.strictEqual(unknown.status, 400)
      assert.strictEqual(unknown.body.error.param, "events.0")
    }).pipe(Effect.provide(TestApp)))
})
