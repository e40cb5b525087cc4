/**
 * Redaction by value: every token Tracebridge issues is recognised by its prefix wherever it is in
 * a text (a URL's path or query string, a message, an error, an annotation) and written as its prefix
 * and `[REDACTED]`; the secrets configured through the environment are redacted as whole values.
 * The redacting console that `main.ts` runs the service with keeps them out of every log line, in
 * every logger Effect writes through the console (the pretty one `npm start` uses, and the rest).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, ConfigProvider, Effect, Logger, LogLevel } from "effect"
import { Console as NodeConsole } from "node:console"
import { PassThrough } from "node:stream"
import * as Redact from "../src/Redact.js"
import * as Crypto from "../src/services/Crypto.js"

/** The prefixes of every token `Crypto.token` issues (grep `Crypto.token(` in packages/http/src). */
const issued = [
  "tb_at_",
  "tb_rt_",
  "tb_ct_",
  "tb_secret_",
  "whsec_",
  "link-sandbox-",
  "link-production-",
  "public-sandbox-",
  "public-production-",
  "tbs_",
  "tbi_"
]

/** A node console writing into a string, as the redacting console's base. */
const capture = () => {
  const stream = new PassThrough()
  let text = ""
  stream.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")))
  return { console: new NodeConsole({ stdout: stream, stderr: stream }), text: () => text }
}

describe("Redact", () => {
  it("writes every issued token as its prefix and the marker, and nothing of its secret part", () => {
    assert.deepStrictEqual([...Redact.prefixes].sort(), [...issued].sort())
    for (const prefix of issued) {
      const token = Crypto.token(prefix)
      const secret = token.slice(prefix.length)
      for (
        const text of [
          token,
          `/v1/x/${token}`,
          `/v1/x?lt=${token}&b=1`,
          `/v1/x?${token}`,
          `"${token}"`,
          `Bearer ${token}.`,
          `a,${token};b`
        ]
      ) {
        const redacted = Redact.text(text)
        assert.include(redacted, `${prefix}[REDACTED]`, text)
        assert.notInclude(redacted, secret.slice(0, 6), text)
      }
    }
  })

  it("keeps ids, which are not secrets, and text without tokens as it is", () => {
    const text =
      "tb_client_0f3a org_1b2c conn_9d8e req_0123456789abcdef01234567 whd_1 wh_2 evt_3 lks_4 fam_5 public-facing link"
    assert.strictEqual(Redact.text(text), text)
    assert.strictEqual(
      Redact.text("/v1/connections?per_page=2&cursor=abc%2Fdef"),
      "/v1/connections?per_page=2&cursor=abc%2Fdef"
    )
  })

  it("finds a token spelled with percent-escapes of its unreserved characters", () => {
    const token = Crypto.token("link-sandbox-")
    const escaped = token.replaceAll("-", "%2D").replaceAll("_", "%5f")
    const redacted = Redact.text(`/connect?lt=${escaped}&x=%2F`)
    assert.strictEqual(redacted, "/connect?lt=link-sandbox-[REDACTED]&x=%2F")
    const tb = Redact.text(`/v1/x/tb%5Fat%5F${token.slice("link-sandbox-".length)}`)
    assert.strictEqual(tb, "/v1/x/tb_at_[REDACTED]")
  })

  it("redacts configured secrets as whole values, also percent-encoded, and ignores values too short to be secrets", () => {
    const redact = Redact.make(["operator-chosen secret/42!", "short"])
    assert.strictEqual(redact("secret=operator-chosen secret/42! end"), "secret=[REDACTED] end")
    assert.strictEqual(
      redact(`/x?s=${encodeURIComponent("operator-chosen secret/42!")}`),
      "/x?s=[REDACTED]"
    )
    assert.strictEqual(redact(`/x?${new URLSearchParams({ s: "operator-chosen secret/42!" })}`), "/x?s=[REDACTED]")
    assert.strictEqual(redact("a short note"), "a short note")
    assert.strictEqual(redact(`tb_ct_abcdef`), "tb_ct_[REDACTED]")
  })

  it.effect("reads the configured secrets: client secret, encryption keys, vendor key", () =>
    Effect.gen(function*() {
      const redact = yield* Redact.fromConfig.pipe(
        Effect.withConfigProvider(ConfigProvider.fromMap(
          new Map([
            ["TRACEBRIDGE_CLIENT_SECRET", "fixed-client-secret-0001"],
            ["TRACEBRIDGE_ENCRYPTION_KEY", "Y3VycmVudC1rZXktMzItYnl0ZXMtbG9uZy1hYmNkZWY="],
            [
              "TRACEBRIDGE_ENCRYPTION_KEYS_PREVIOUS",
              "cHJldmlvdXMta2V5LW9uZS0zMi1ieXRlcy1sb25nLTE=, cHJldmlvdXMta2V5LXR3by0zMi1ieXRlcy1sb25nLTI="
            ],
            ["PROVIDER_A_VENDOR_KEY", "vendor-key-5b1e9d27"]
          ])
        ))
      )
      const text =
        "fixed-client-secret-0001 Y3VycmVudC1rZXktMzItYnl0ZXMtbG9uZy1hYmNkZWY= cHJldmlvdXMta2V5LW9uZS0zMi1ieXRlcy1sb25nLTE= cHJldmlvdXMta2V5LXR3by0zMi1ieXRlcy1sb25nLTI= vendor-key-5b1e9d27"
      assert.strictEqual(redact(text), "[REDACTED] [REDACTED] [REDACTED] [REDACTED] [REDACTED]")
      const none = yield* Redact.fromConfig.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))
      assert.strictEqual(none("tb_rt_abc fixed-client-secret-0001"), "tb_rt_[REDACTED] fixed-client-secret-0001")
    }))

  it.effect("keeps tokens out of every logger's output: message, error cause, defect, annotations and spans", () =>
    Effect.gen(function*() {
      const access = Crypto.token("tb_at_")
      const link = Crypto.token("link-sandbox-")
      const hook = Crypto.token("whsec_")
      const connection = Crypto.token("tb_ct_")
      const configured = "operator-chosen-secret-77"
      const secrets = [access, link, hook, connection].map((t) => t.slice(-40)).concat(configured)
      const loggers = {
        default: Logger.defaultLogger,
        pretty: Logger.prettyLoggerDefault,
        prettyStderr: Logger.prettyLogger({ stderr: true, colors: false }),
        logfmt: Logger.withConsoleLog(Logger.logfmtLogger),
        json: Logger.withConsoleLog(Logger.jsonLogger),
        structured: Logger.withLeveledConsole(Logger.structuredLogger),
        stderr: Logger.withConsoleError(Logger.stringLogger)
      }
      for (const [name, logger] of Object.entries(loggers)) {
        const out = capture()
        yield* Effect.gen(function*() {
          yield* Effect.logError(
            `refused ${access} for ${configured}`,
            Cause.sequential(
              Cause.fail(new Error(`upstream said ${link}`)),
              Cause.die(new Error(`defect with ${hook}`, { cause: new Error(`inner ${connection}`) }))
            )
          ).pipe(
            Effect.annotateLogs({ "http.url": `/v1/x?lt=${link}`, token: { nested: [connection] } }),
            Effect.withLogSpan(`span ${access}`)
          )
          yield* Effect.logWarning({ body: { secret: hook } }, [access])
          yield* Effect.log(link, connection)
        }).pipe(
          Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
          Effect.provide(Logger.minimumLogLevel(LogLevel.All)),
          Effect.withConsole(Redact.console(Redact.make([configured]), out.console))
        )
        const text = out.text()
        assert.include(text, "tb_at_[REDACTED]", name)
        assert.include(text, "link-sandbox-[REDACTED]", name)
        for (const secret of secrets) assert.notInclude(text, secret, `${name}: ${text}`)
      }
    }))

  it.effect("passes every console method through the redaction", () =>
    Effect.gen(function*() {
      const out = capture()
      const token = Crypto.token("tb_rt_")
      const console = Redact.console(Redact.text, out.console)
      yield* console.log(token)
      yield* console.error("%s!", token)
      yield* console.warn({ token })
      yield* console.info(token)
      yield* console.debug(token)
      yield* console.dir({ token })
      yield* console.table([{ token }])
      yield* console.group({ label: token })
      yield* console.groupEnd
      console.unsafe.log(new Error(token))
      console.unsafe.trace(token)
      console.unsafe.assert(false, token)
      assert.notInclude(out.text(), token.slice(6, 30))
      assert.include(out.text(), "tb_rt_[REDACTED]")
    }))
})

describe("Redact.json", () => {
  it("replaces every value under a secret-looking name, at any depth, and redacts tokens in every other string", () => {
    const token = "tb_at_AbCdEfGhIjKlMnOpQrStUvWxYz012345"
    const body = {
      grant_type: "client_credentials",
      client_id: "tb_client_1",
      client_secret: "s3cret-value",
      credentials: { username: "u", password: "p" },
      nested: [{ api_key: 12345, note: `use ${token}` }],
      public_token: null,
      [token]: "a token as a key"
    }
    assert.deepStrictEqual(Redact.json(body), {
      grant_type: "client_credentials",
      client_id: "tb_client_1",
      client_secret: "[REDACTED]",
      credentials: "[REDACTED]",
      nested: [{ api_key: "[REDACTED]", note: "use tb_at_[REDACTED]" }],
      public_token: null,
      "tb_at_[REDACTED]": "a token as a key"
    })
  })

  it("takes the configured secrets' redaction and another set of names", () => {
    const redact = Redact.make(["configured-secret-value"])
    assert.deepStrictEqual(
      Redact.json({ error: { code: "invalid_client", message: "not configured-secret-value" } }, redact, /secret/i),
      { error: { code: "invalid_client", message: "not [REDACTED]" } }
    )
  })
})
