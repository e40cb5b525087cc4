/**
 * The methods each path of the contract takes (issue #30): a request whose path exists but whose
 * method does not answers 405 with `Allow`, not 404. Read once from `Api` (`HttpApi.reflect`), so a
 * new endpoint is covered without a line here.
 *
 * @since 0.1.0
 */
import { HttpApi } from "@effect/platform"
import { Api } from "@tracebridge/api/Api"

const order = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

interface Route {
  readonly pattern: RegExp
  readonly methods: Set<string>
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const routes: ReadonlyArray<Route> = (() => {
  const byPath = new Map<string, Set<string>>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const methods = byPath.get(endpoint.path) ?? new Set<string>()
      methods.add(endpoint.method.toUpperCase())
      byPath.set(endpoint.path, methods)
    }
  })
  return [...byPath].map(([path, methods]) => ({
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
