/**
 * What the guides in `docs/guides/` show is what the service does: the webhooks guide's plain-Node
 * verifier, taken from the guide as written, accepts what Tracebridge signs and refuses the rest.
 * (The getting-started session runs in ReadmeSession.test.ts; the page in Docs.test.ts.)
 */
import { OpenApi } from "@effect/platform"
import { assert, describe, it } from "@effect/vitest"
import { WebhookSignature } from "@tracebridge/core"
import { Api } from "@tracebridge/http"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

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
          const code = resolve(schema?.properties?.error?.properties?.code)
          const codes: Array<string> = code?.enum ?? (code?.const === undefined ? [] : [code.const])
          for (const c of codes) out.set(status, (out.get(status) ?? new Set()).add(c))
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
