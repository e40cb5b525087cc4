/**
 * The SDK's rules without a browser: the script build installs `Tracebridge.Connect`, exactly one
 * terminal callback runs per session, redirect mode completes from the returned URL, and a destroyed
 * session calls nothing.
 */
import { assert, describe, it } from "@effect/vitest"
import { create } from "@tracebridge/connect"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { runInNewContext } from "node:vm"

const sdk = readFileSync(fileURLToPath(new URL("../dist/sdk.js", import.meta.url)), "utf8")

describe("Connect", () => {
  it("the script build installs window.Tracebridge.Connect.create", () => {
    const window: any = { location: { origin: "https://app.example" } }
    runInNewContext(sdk, { window, document: { currentScript: { src: "https://api.example/connect/sdk.js" } }, URL })
    assert.strictEqual(typeof window.Tracebridge.Connect.create, "function")
  })

  it("completes a redirect-mode session once, from the URL the page returned to", () => {
    const calls: Array<string> = []
    const handle = create({
      token: "link-sandbox-x",
      origin: "https://api.example",
      receivedRedirectUri:
        "https://app.example/callback?public_token=public-sandbox-abc&state=s1&link_session_id=lks_1&provider=provider_a&state_code=CO",
      onSuccess: (token, metadata) => calls.push(`success:${token}:${metadata.link_session_id}:${metadata.state}`),
      onExit: () => calls.push("exit"),
      onEvent: (name) => calls.push(`event:${name}`)
    })
    handle.open()
    handle.open()
    handle.destroy()
    assert.deepStrictEqual(calls, ["event:SUCCESS", "success:public-sandbox-abc:lks_1:CO"])
  })

  it("reports a redirect that carries an error through onExit({type, code, message}), once", () => {
    const calls: Array<unknown> = []
    const handle = create({
      token: "t",
      origin: "https://api.example",
      receivedRedirectUri:
        "https://app.example/callback?status=failed&error=link_token_expired&error_type=validation_error&error_description=expired",
      onSuccess: () => calls.push("success"),
      onExit: (error, metadata) => calls.push({ error, status: metadata.status })
    })
    handle.open()
    handle.open()
    assert.deepStrictEqual(calls, [{
      error: { type: "validation_error", code: "link_token_expired", message: "expired" },
      status: "failed"
    }])
  })

  it("a redirect after the user closed the page is onExit(null)", () => {
    const calls: Array<unknown> = []
    create({
      token: "t",
      origin: "https://api.example",
      receivedRedirectUri: "https://app.example/callback?status=user_exited&state=s1&link_session_id=lks_1",
      onSuccess: () => calls.push("success"),
      onExit: (error, metadata) => calls.push({ error, status: metadata.status, session: metadata.link_session_id })
    }).open()
    assert.deepStrictEqual(calls, [{ error: null, status: "user_exited", session: "lks_1" }])
  })

  it("a redirect with neither a public token nor a known status is still a failure with the error shape", () => {
    const calls: Array<unknown> = []
    create({
      token: "t",
      origin: "https://api.example",
      receivedRedirectUri: "https://app.example/callback",
      onSuccess: () => calls.push("success"),
      onExit: (error) => calls.push(error)
    }).open()
    assert.deepStrictEqual(calls, [{ type: "api_error", code: "internal_error", message: "Connect did not finish" }])
  })

  it("calls nothing after destroy", () => {
    const calls: Array<string> = []
    const handle = create({
      token: "t",
      origin: "https://api.example",
      receivedRedirectUri: "https://app.example/callback?public_token=p",
      onSuccess: () => calls.push("success")
    })
    handle.destroy()
    handle.open()
    assert.deepStrictEqual(calls, [])
  })
})
