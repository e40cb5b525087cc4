/**
 * The sandbox logins the READMEs and guides give are the ones the sandbox really accepts: every
 * login value they quote is one of the sandbox's own (`Registry.get(p).logins`), every BioTrack
 * login they give names its UBI, username and password, and the login they give as the working one
 * logs in against the emulators on the wire (provider_b's `login` action answers a session id,
 * provider_a's HTTP Basic call answers 200), while the refused ones are refused.
 */
import { assert, describe, it } from "@effect/vitest"
import { Registry, Sandbox, SandboxServer } from "@tracebridge/sandbox"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const documents = [
  "README.md",
  "examples/quickstart/README.md",
  "packages/connect/README.md",
  "packages/sandbox/README.md",
  "docs/sandbox.md"
]
const read = (path: string) => readFileSync(`${root}${path}`, "utf8")

const a = Registry.get("provider_a").logins
const b = Registry.get("provider_b").logins

/** The field a phrase names, as the sandbox's logins key it. */
const fields: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bUBI\s+`([^`]+)`/g, "ubi"],
  [/\busername\s+`([^`]+)`/gi, "username"],
  [/\bpassword\s+`([^`]+)`/gi, "password"],
  [/\buser (?:API )?key\s+`([^`]+)`/gi, "user_key"]
]
const known = (field: string) =>
  new Set([a, b].flatMap((logins) => [logins.good, logins.bad, logins.locked].map((l) => l[field])).filter(Boolean))

/** The sentence (up to a full stop or a blank line) from `start` on. */
const sentenceFrom = (text: string, start: number) => {
  const rest = text.slice(start)
  const end = rest.search(/\.\s|\n\s*\n|\)\s*[:.]/)
  return (end === -1 ? rest : rest.slice(0, end)).replace(/\s+/g, " ")
}

/** Every BioTrack login a document gives: the sentence from its UBI on. */
const bioTrackLogins = (text: string) =>
  [...text.matchAll(/\bUBI\s+`([^`]+)`/g)].map((m) => {
    const sentence = sentenceFrom(text, m.index!)
    return {
      sentence,
      ubi: m[1]!,
      username: /\busername\s+`([^`]+)`/i.exec(sentence)?.[1],
      password: /\bpassword\s+`([^`]+)`/i.exec(sentence)?.[1]
    }
  })

const sandbox = new Sandbox.Sandbox({
  providers: Registry.installed,
  seed: "42",
  referenceDate: "2026-03-15T12:00:00.000Z",
  now: () => 0
})
const handler = SandboxServer.makeHandler(sandbox)
const origin = SandboxServer.IN_PROCESS_ORIGIN

const bioTrackLogin = async (login: Readonly<Record<string, string>>) => {
  const response = await handler(
    new Request(SandboxServer.baseUrl(origin, "provider_b", "HI"), {
      method: "POST",
      body: JSON.stringify({
        API: "4.0",
        action: "login",
        license_number: login.ubi,
        username: login.username,
        password: login.password
      })
    })
  )
  return (await response.json()) as { readonly success: number; readonly sessionid?: string }
}

const metrcCall = async (userKey: string) => {
  const response = await handler(
    new Request(`${SandboxServer.baseUrl(origin, "provider_a", "CO")}/facilities/v2/`, {
      headers: { authorization: `Basic ${Buffer.from(`any-vendor-key:${userKey}`).toString("base64")}` }
    })
  )
  return response.status
}

describe("the sandbox logins the documents give", () => {
  for (const path of documents) {
    it(`${path}: every login value it quotes is one the sandbox has`, () => {
      const text = read(path)
      let quoted = 0
      for (const [pattern, field] of fields) {
        for (const match of text.matchAll(pattern)) {
          quoted++
          assert.isTrue(
            known(field).has(match[1]!),
            `${path}: ${field} \`${match[1]}\` is not a sandbox login (${[...known(field)].join(", ")})`
          )
        }
      }
      assert.isAbove(quoted, 0, `${path} quotes no sandbox login`)
    })

    it(`${path}: every BioTrack login names its UBI, username and password, and the good one works`, () => {
      for (const login of bioTrackLogins(read(path))) {
        assert.isDefined(login.username, `${path}: no username in "${login.sentence}"`)
        assert.isDefined(login.password, `${path}: no password in "${login.sentence}"`)
        const outcome = b.check({ ubi: login.ubi, username: login.username!, password: login.password! })
        assert.strictEqual(outcome._tag, "Ok", `${path}: "${login.sentence}" does not log in`)
      }
    })
  }

  it("the README gives both providers' working logins", () => {
    const text = read("README.md")
    const bio = bioTrackLogins(text)
    assert.isAbove(bio.length, 0, "README.md gives no BioTrack login")
    assert.deepStrictEqual(
      { ubi: bio[0]!.ubi, username: bio[0]!.username, password: bio[0]!.password },
      { ubi: b.good.ubi, username: b.good.username, password: b.good.password }
    )
    assert.include(text, `user API key \`${a.good.user_key}\``)
  })

  it("the documented logins are what the emulators answer on the wire", async () => {
    const good = await bioTrackLogin(b.good)
    assert.strictEqual(good.success, 1)
    assert.isString(good.sessionid)
    assert.strictEqual((await bioTrackLogin(b.bad)).success, 0)
    assert.strictEqual((await bioTrackLogin(b.locked)).success, 0)
    // the mistake the quickstart's README once made: any username with the right password
    assert.strictEqual((await bioTrackLogin({ ...b.good, username: "any" })).success, 0)
    assert.strictEqual(await metrcCall(a.good.user_key!), 200)
    assert.strictEqual(await metrcCall(a.bad.user_key!), 401)
  })
})
