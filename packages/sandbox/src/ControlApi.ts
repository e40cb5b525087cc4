/**
 * The control API beside the emulated providers (the role of moto's `/moto-api`): dump a world's
 * state, reset, reseed, and run a scenario. Placeholder routes until scenarios land.
 *
 * @since 0.1.0
 */
import type { Sandbox } from "./Sandbox.js"

const json = (body: unknown, status = 200) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

/**
 * @since 0.1.0
 * @category handlers
 */
export const handle = async (sandbox: Sandbox, request: Request): Promise<Response> => {
  const url = new URL(request.url)
  if (request.method === "POST" && url.pathname === "/_sandbox/reset") {
    sandbox.reset()
    return json({ reset: true })
  }
  if (request.method === "GET" && url.pathname === "/_sandbox/state") {
    return json({ seed: sandbox.options.seed, reference_date: sandbox.options.referenceDate, worlds: sandbox.keys() })
  }
  return json({ error: "not_found", message: `No control route ${request.method} ${url.pathname}` }, 404)
}
