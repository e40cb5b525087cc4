/**
 * A small declarative router: a route is a method, one or more path patterns and a handler, and
 * the first route of a table whose method and pattern match a request answers it (so a table
 * lists `/packages/v2/active` before `/packages/v2/{key}`).
 *
 * A pattern is literal segments and parameters: `{name}` matches one segment (URI-decoded),
 * `{name:int}` one segment of digits only.
 */

/** The parameters a pattern took from a path. */
export type Params = Readonly<Record<string, string>>

/** A route of a table. */
export interface Route<H> {
  readonly method: "GET" | "POST"
  readonly patterns: ReadonlyArray<string>
  readonly handler: H
  /** The parameters of `path`, or undefined when no pattern matches it. */
  readonly match: (path: string) => Params | undefined
}

const compile = (pattern: string): (path: string) => Params | undefined => {
  const names: Array<string> = []
  const source = pattern.split("/").map((segment) => {
    const param = /^\{([A-Za-z]+)(?::int)?\}$/.exec(segment)
    if (param === null) return segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
    names.push(param[1]!)
    return segment.endsWith(":int}") ? "(\\d+)" : "([^/]+)"
  }).join("/")
  const regex = new RegExp(`^${source}$`)
  return (path) => {
    const m = regex.exec(path)
    if (m === null) return undefined
    const params: Record<string, string> = {}
    try {
      names.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1]!)
      })
    } catch {
      return undefined
    }
    return params
  }
}

const make = <H>(
  method: Route<H>["method"],
  patterns: string | ReadonlyArray<string>,
  handler: H
): Route<H> => {
  const list = typeof patterns === "string" ? [patterns] : patterns
  const matchers = list.map(compile)
  return {
    method,
    patterns: list,
    handler,
    match: (path) => {
      for (const matcher of matchers) {
        const params = matcher(path)
        if (params !== undefined) return params
      }
      return undefined
    }
  }
}

/** A GET route. */
export const get = <H>(patterns: string | ReadonlyArray<string>, handler: H): Route<H> => make("GET", patterns, handler)

/** A POST route. */
export const post = <H>(patterns: string | ReadonlyArray<string>, handler: H): Route<H> =>
  make("POST", patterns, handler)

/** Whether any route of `table`, whatever its method, matches `path` (otherwise the path is unknown: 404). */
export const knows = (table: ReadonlyArray<Route<unknown>>, path: string): boolean =>
  table.some((route) => route.match(path) !== undefined)

/** The first route of `table` for `method` and `path`, with its parameters. */
export const find = <H>(
  table: ReadonlyArray<Route<H>>,
  method: string,
  path: string
): { readonly route: Route<H>; readonly params: Params } | undefined => {
  for (const route of table) {
    if (route.method !== method) continue
    const params = route.match(path)
    if (params !== undefined) return { route, params }
  }
  return undefined
}
