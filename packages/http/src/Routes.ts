/**
 * The methods each path of the contract takes (issue #30): a request whose path exists but whose
 * method does not answers 405 with `Allow`, not 404. Read once from `Api` and the dashboard's
 * `DashboardApi` (`HttpApi.reflect`), so a new endpoint is covered without a line here.
 *
 * @since 0.1.0
 */
import { HttpApi } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"
import { DashboardApi } from "@tracebridge/api/DashboardApi"

const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

interface Route {
  readonly path: string
  readonly pattern: RegExp
  readonly methods: Set<string>
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const routes: ReadonlyArray<Route> = (() => {
  const byPath = new Map<string, Set<string>>()
  // the contract's, and the dashboard's internal API's (issue #33), which is served beside it
  for (const api of [Api, DashboardApi] as ReadonlyArray<HttpApi.HttpApi.Any>) {
    HttpApi.reflect(api as typeof Api, {
      onGroup: () => {},
      onEndpoint: ({ endpoint }) => {
        const methods = byPath.get(endpoint.path) ?? new Set<string>()
        methods.add(endpoint.method.toUpperCase())
        byPath.set(endpoint.path, methods)
      }
    })
  }
  return [...byPath].map(([path, methods]) => ({
    path,
    pattern: new RegExp(
      `^${path.split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : escapeRegExp(segment)).join("/")}$`
    ),
    methods
  }))
})()

/**
 * The methods the contract takes at `path` (no query string), in a fixed order; empty when no
 * endpoint has that path.
 *
 * @since 0.1.0
 * @category routing
 */
export const allowedMethods = (path: string): ReadonlyArray<string> => {
  const found = new Set<string>()
  for (const route of routes) {
    if (route.pattern.test(path)) { for (const method of route.methods) found.add(method) }
  }
  return order.filter((m) => found.has(m))
}

/**
 * The contract's path template that `path` (no query string) matches, such as
 * `/v1/connections/:connection_id`, for a metric's `route` label (never the raw path, which holds
 * ids); undefined when no endpoint has that path.
 *
 * @since 0.1.0
 * @category routing
 */
export const template = (path: string): string | undefined => {
  // a literal segment wins over a parameter (`/v1/sync/status` over `/v1/sync/:id`)
  let found: string | undefined
  let params = Infinity
  for (const route of routes) {
    if (route.pattern.test(path)) {
      const n = route.path.split(":").length
      if (n < params) {
        found = route.path
        params = n
      }
    }
  }
  return found
}
