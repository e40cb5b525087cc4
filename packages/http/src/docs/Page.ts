/**
 * The reference at `/docs`: one static HTML page rendered from the OpenAPI document and the guides
 * in `docs/guides/`, with no script and nothing loaded from elsewhere (ADR 0013). The http package's
 * build renders it into `dist/docs.html` (`docs/Build.ts`); `docs/Route.ts` serves it.
 *
 * @since 0.1.0
 */
import * as Markdown from "./Markdown.js"

type Json = Record<string, any>

/**
 * A guide: a Markdown file of `docs/guides/`, shown as a section of the page.
 *
 * @since 0.1.0
 * @category models
 */
export interface Guide {
  /** The file's name without `.md`: the section's anchor (`#getting-started`). */
  readonly id: string
  readonly markdown: string
}

/**
 * The page's one style sheet. It is inline; the route allows exactly it by its hash.
 *
 * @since 0.1.0
 * @category constants
 */
export const css = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%;scroll-padding-top:12px}
body{margin:0;font:16px/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#0f172a;background:#fff}
a{color:#1d4ed8}a:focus-visible,summary:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
code,pre{font:0.875em/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
code{background:#f1f5f9;border-radius:4px;padding:0.1em 0.3em;overflow-wrap:anywhere}
pre{background:#0f172a;color:#e2e8f0;padding:12px 14px;border-radius:8px;overflow-x:auto;max-width:100%}
pre code{background:none;padding:0;color:inherit;overflow-wrap:normal;font-size:inherit}
h1,h2,h3,h4{line-height:1.25;margin:1.6em 0 0.5em}h1{font-size:1.75rem;margin-top:0.4em}h2{font-size:1.45rem}
h3{font-size:1.15rem}h4{font-size:1rem}
p,li{overflow-wrap:anywhere}
.layout{display:block}
header.top{padding:20px 16px 8px;border-bottom:1px solid #e2e8f0}
header.top p{margin:0.3em 0;color:#334155}
main{padding:0 16px 64px;max-width:920px;min-width:0}
nav.side{display:none}
nav ul{list-style:none;margin:0;padding:0}nav li{margin:2px 0}
nav a{text-decoration:none;color:#0f172a;display:block;padding:2px 6px;border-radius:4px}nav a:hover{background:#e2e8f0}
nav a{font-size:0.9rem}
nav h2{font-size:0.78rem;text-transform:uppercase;letter-spacing:.06em;color:#475569;margin:16px 0 4px}
nav h2 a{font-size:inherit;color:inherit}
nav .brand{font-weight:700;font-size:1rem;padding:4px 6px}
details.toc{margin:12px 0;border:1px solid #cbd5e1;border-radius:8px;padding:8px 10px}
details.toc summary{cursor:pointer;font-weight:600}
section.guide,section.tag{border-top:1px solid #e2e8f0;margin-top:32px}
main>section:first-child{border-top:0;margin-top:0}
section.op{border:1px solid #e2e8f0;border-radius:10px;padding:4px 14px 10px;margin:18px 0}
section.op h3{margin:0.7em 0 0.3em}
.endpoint{display:flex;flex-wrap:wrap;gap:6px 8px;align-items:baseline;margin:0 0 6px}
.endpoint code{background:none;padding:0;font-size:0.9rem}
.method{font:700 0.75rem/1 ui-monospace,monospace;padding:4px 6px;border-radius:4px;color:#fff;text-transform:uppercase}
.get{background:#166534}.post{background:#1d4ed8}.put{background:#92400e}.patch{background:#6b21a8}.delete{background:#b91c1c}
.auth{font-size:0.8rem;color:#475569}
.op h4{font-size:0.8rem;text-transform:uppercase;letter-spacing:.05em;color:#475569;margin:14px 0 4px}
ul.fields{list-style:none;margin:0;padding:0}
ul.fields li{padding:6px 0;border-top:1px solid #f1f5f9}
ul.fields ul.fields{margin:4px 0 0 12px;padding-left:10px;border-left:2px solid #e2e8f0}
.name{font-weight:600;background:none;padding:0}
.type{color:#475569;font-size:0.88rem}
.req{color:#b91c1c;font-size:0.75rem;font-weight:600;margin-left:4px}
.note{display:block;color:#334155;font-size:0.92rem}
.status{font:700 0.85rem ui-monospace,monospace;margin-right:6px}
.s2{color:#166534}.s4{color:#b45309}.s5{color:#b91c1c}
div.table{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:10px 0;font-size:0.92rem}
th,td{border:1px solid #e2e8f0;padding:6px 8px;text-align:left;vertical-align:top}
th{background:#f8fafc}
td code{white-space:nowrap;overflow-wrap:normal}
blockquote{margin:12px 0;padding:4px 14px;border-left:4px solid #93c5fd;background:#eff6ff}
section.schema{margin:14px 0;padding-top:4px;border-top:1px solid #f1f5f9}
section.schema h3{font-size:1rem;margin:0.6em 0 0.2em}
@media (max-width:480px){pre{font-size:0.78em}}
@media (min-width:960px){
.layout{display:grid;grid-template-columns:280px minmax(0,1fr)}
nav.side{display:block;position:sticky;top:0;height:100vh;overflow-y:auto;border-right:1px solid #e2e8f0;padding:12px 10px 40px;background:#f8fafc}
details.toc{display:none}
main{padding:0 40px 80px}
header.top{padding:24px 40px 10px}
}
`

const { escape, inline } = Markdown

/** A link in the document's descriptions or a guide: guides become in-page anchors. */
const resolveLink = (guides: ReadonlyArray<string>) => (href: string): string | undefined => {
  if (/^(https?:|mailto:|#|\/)/.test(href)) return href
  const m = /^(?:\.\/)?([\w-]+)\.md(?:#(.*))?$/.exec(href)
  if (m !== null && guides.includes(m[1]!)) return m[2] === undefined ? `#${m[1]}` : `#${m[1]}-${m[2]}`
  return undefined
}

const refName = (ref: string): string => ref.slice(ref.lastIndexOf("/") + 1)

const resolve = (document: Json, value: Json): Json => {
  if (typeof value?.$ref !== "string") return value
  const path = value.$ref.replace(/^#\//, "").split("/")
  let out: any = document
  for (const key of path) out = out?.[key]
  return out ?? {}
}

/** A description that only restates a constraint the page shows anyway ("a string at most 200 …"). */
const restatesConstraint = (text: string) =>
  /^(a|an) (string|array|number|integer|non-negative|positive)/.test(text) || /^(finite|int)$/.test(text)

const isNull = (schema: Json) => schema?.type === "null"

/** A schema's type in a few words, with links to named schemas. */
const typeOf = (schema: Json | boolean | undefined): string => {
  if (schema === undefined || typeof schema === "boolean") return "any"
  if (typeof schema.$ref === "string") {
    const name = refName(schema.$ref)
    return `<a href="#schema-${escape(name)}">${escape(name)}</a>`
  }
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) {
    return union.map((s: Json) => isNull(s) ? "null" : typeOf(s)).join(" | ")
  }
  if (Array.isArray(schema.allOf)) return schema.allOf.map(typeOf).join(" &amp; ")
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.map((v: unknown) => `<code>${escape(JSON.stringify(v))}</code>`)
    return values.length > 14 ? `${values.slice(0, 14).join(" | ")} | … (${values.length})` : values.join(" | ")
  }
  if (schema.const !== undefined) return `<code>${escape(JSON.stringify(schema.const))}</code>`
  const type = Array.isArray(schema.type) ? schema.type.join(" | ") : schema.type
  if (type === "array") return `array of ${typeOf(schema.items)}`
  if (type === undefined) return schema.properties !== undefined ? "object" : "any"
  return schema.format === undefined ? escape(type) : `${escape(type)} (${escape(schema.format)})`
}

const constraints = (schema: Json): string => {
  const out: Array<string> = []
  const s = schema ?? {}
  if (s.minLength !== undefined && s.maxLength !== undefined) out.push(`${s.minLength}–${s.maxLength} characters`)
  else if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`)
  else if (s.minLength !== undefined && s.minLength > 1) out.push(`at least ${s.minLength} characters`)
  if (s.minimum !== undefined && s.maximum !== undefined) out.push(`${s.minimum} to ${s.maximum}`)
  else if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`)
  else if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`)
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`)
  if (s.minItems !== undefined && s.minItems > 0) out.push(`at least ${s.minItems} items`)
  if (s.maxItems !== undefined) out.push(`at most ${s.maxItems} items`)
  if (s.pattern !== undefined) out.push(`pattern <code>${escape(s.pattern)}</code>`)
  if (s.default !== undefined) out.push(`default <code>${escape(JSON.stringify(s.default))}</code>`)
  return out.join("; ")
}

/** The inline object a schema describes (itself, or the items of an array of it), if any. */
const inlineObject = (schema: Json | undefined): Json | undefined => {
  if (schema === undefined || schema.$ref !== undefined) return undefined
  if (schema.properties !== undefined) return schema
  if (schema.type === "array" && schema.items?.properties !== undefined) return schema.items
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) {
    const objects = union.filter((s: Json) => s.properties !== undefined)
    if (objects.length === 1) return objects[0]
  }
  return undefined
}

const note = (schema: Json | undefined, extra: string | undefined, link: Markdown.LinkResolver): string => {
  const parts: Array<string> = []
  const description = extra ?? schema?.description
  if (typeof description === "string" && description !== "" && !restatesConstraint(description)) {
    parts.push(inline(description, link))
  }
  const c = constraints(schema ?? {})
  if (c !== "") parts.push(c)
  return parts.length === 0 ? "" : `<span class="note">${parts.join(". ")}</span>`
}

/** An object's properties as a list, nested for inline objects (three levels at most). */
const fields = (schema: Json, link: Markdown.LinkResolver, depth = 0): string => {
  const properties: Json = schema.properties ?? {}
  const required: ReadonlyArray<string> = schema.required ?? []
  const items = Object.entries(properties).map(([name, property]: [string, Json]) => {
    const nested = depth < 3 ? inlineObject(property) : undefined
    return `<li><code class="name">${escape(name)}</code> <span class="type">${typeOf(property)}</span>${
      required.includes(name) ? "<span class=\"req\">required</span>" : ""
    }${note(property, undefined, link)}${nested === undefined ? "" : fields(nested, link, depth + 1)}</li>`
  })
  return items.length === 0 ? "" : `<ul class="fields">${items.join("")}</ul>`
}

/** A body's schema: a link to a named schema, or the inline object's fields. */
const body = (schema: Json | undefined, link: Markdown.LinkResolver): string => {
  const object = inlineObject(schema)
  if (object !== undefined) {
    const wrapper = object === schema ? "" : `<p class="type">${typeOf({ ...schema, items: { type: "object" } })}</p>`
    return wrapper + fields(object, link)
  }
  return `<p class="type">${typeOf(schema)}</p>`
}

const common = new Set(["x-request-id", "ratelimit-limit", "ratelimit-remaining", "ratelimit-reset"])

const methods = ["get", "post", "put", "patch", "delete"] as const

/**
 * `listPackages` as a title when an operation has no summary: "List packages".
 *
 * @since 0.1.0
 * @category rendering
 */
export const titleOf = (operation: Json, method: string, path: string): string => {
  if (typeof operation.summary === "string" && operation.summary !== "") return operation.summary
  if (typeof operation.operationId === "string") {
    const words = operation.operationId.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase()
    return words.charAt(0).toUpperCase() + words.slice(1)
  }
  return `${method.toUpperCase()} ${path}`
}

interface Operation {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly title: string
  readonly operation: Json
}

const operationsOf = (document: Json): Map<string, Array<Operation>> => {
  const byTag = new Map<string, Array<Operation>>()
  for (const tag of document.tags ?? []) byTag.set(tag.name, [])
  for (const [path, item] of Object.entries(document.paths ?? {}) as Array<[string, Json]>) {
    for (const method of methods) {
      const operation = item[method]
      if (operation === undefined) continue
      const tag = operation.tags?.[0] ?? "other"
      const id = operation.operationId ?? `${method}-${path}`.replace(/[^\w-]+/g, "-")
      if (!byTag.has(tag)) byTag.set(tag, [])
      byTag.get(tag)!.push({ id, method, path, title: titleOf(operation, method, path), operation })
    }
  }
  for (const [tag, operations] of byTag) if (operations.length === 0) byTag.delete(tag)
  return byTag
}

const tagTitle = (tag: string): string => {
  const known: Record<string, string> = {
    oauth: "OAuth tokens",
    link: "Linking",
    resources: "Facility resources",
    system: "System"
  }
  return known[tag] ?? tag.charAt(0).toUpperCase() + tag.slice(1)
}

const renderOperation = (document: Json, op: Operation, link: Markdown.LinkResolver): string => {
  const o = op.operation
  const out: Array<string> = []
  out.push(`<section class="op" id="op-${escape(op.id)}">`)
  out.push(`<h3>${escape(op.title)}</h3>`)
  const secured = Array.isArray(o.security) ? o.security.length > 0 : (document.security ?? []).length > 0
  out.push(
    `<p class="endpoint"><span class="method ${op.method}">${op.method}</span><code>${
      escape(op.path).replace(/\//g, "/<wbr>")
    }</code>${secured ? "<span class=\"auth\">bearer token</span>" : "<span class=\"auth\">no token</span>"}</p>`
  )
  if (typeof o.description === "string" && o.description !== "") {
    out.push(Markdown.render(o.description, { link, shiftHeadings: 3 }))
  }
  const parameters: Array<Json> = (o.parameters ?? []).map((p: Json) => resolve(document, p))
  if (parameters.length > 0) {
    out.push("<h4>Parameters</h4><ul class=\"fields\">")
    for (const p of parameters) {
      out.push(
        `<li><code class="name">${escape(p.name)}</code> <span class="type">${escape(p.in)} · ${
          typeOf(p.schema)
        }</span>${p.required === true ? "<span class=\"req\">required</span>" : ""}${
          note(p.schema, p.description, link)
        }</li>`
      )
    }
    out.push("</ul>")
  }
  const requestBody = o.requestBody === undefined ? undefined : resolve(document, o.requestBody)
  if (requestBody?.content !== undefined) {
    const entries = Object.entries(requestBody.content) as Array<[string, Json]>
    out.push(`<h4>Body</h4><p class="type">${entries.map(([type]) => `<code>${escape(type)}</code>`).join(" or ")}</p>`)
    const [, first] = entries[0]!
    if (typeof requestBody.description === "string") out.push(Markdown.render(requestBody.description, { link }))
    out.push(body(first.schema, link))
    if (first.example !== undefined) {
      out.push(`<pre data-lang="json"><code>${escape(JSON.stringify(first.example, null, 2))}</code></pre>`)
    }
  }
  out.push("<h4>Responses</h4><ul class=\"fields\">")
  for (const [status, raw] of Object.entries(o.responses ?? {}) as Array<[string, Json]>) {
    const response = resolve(document, raw)
    const schema = response.content?.["application/json"]?.schema ??
      (Object.values(response.content ?? {})[0] as Json | undefined)?.schema
    const headers = Object.keys(response.headers ?? {}).filter((h) => !common.has(h.toLowerCase()))
    const media: Json | undefined = response.content?.["application/json"]
    const example = media?.example ?? (Object.values(media?.examples ?? {})[0] as Json | undefined)?.value
    out.push(
      `<li><span class="status s${status.charAt(0)}">${escape(status)}</span>${
        inline(response.description ?? "", link)
      }${headers.length === 0 ? "" : ` <span class="type">headers: ${headers.map(escape).join(", ")}</span>`}${
        schema === undefined
          ? ""
          : status.startsWith("2")
          ? body(schema, link)
          : ` <span class="type">${typeOf(schema)}</span>`
      }${
        example === undefined || !status.startsWith("2")
          ? ""
          : `<pre data-lang="json"><code>${escape(JSON.stringify(example, null, 2))}</code></pre>`
      }</li>`
    )
  }
  out.push("</ul></section>")
  return out.join("\n")
}

const renderSchema = (name: string, schema: Json, link: Markdown.LinkResolver): string => {
  const object = inlineObject(schema)
  const description = typeof schema.description === "string" && schema.description !== name &&
      !restatesConstraint(schema.description)
    ? `<p>${inline(schema.description, link)}</p>`
    : ""
  return `<section class="schema" id="schema-${escape(name)}"><h3>${escape(name)}</h3>${description}${
    object === schema
      ? fields(schema, link)
      : `<p class="type">${typeOf(schema)}</p>${object === undefined ? "" : fields(object, link)}${
        constraints(schema) === "" ? "" : `<p class="note">${constraints(schema)}</p>`
      }`
  }</section>`
}

const guideTitle = (guide: Guide): string => /^#\s+(.*)$/m.exec(guide.markdown)?.[1] ?? guide.id

const navigation = (guides: ReadonlyArray<Guide>, byTag: Map<string, Array<Operation>>): string =>
  `<h2>Guides</h2><ul>${
    guides.map((g) => `<li><a href="#${escape(g.id)}">${inline(guideTitle(g))}</a></li>`).join("")
  }</ul>${
    [...byTag].map(([tag, operations]) =>
      `<h2><a href="#tag-${escape(tag)}">${escape(tagTitle(tag))}</a></h2><ul>${
        operations.map((op) => `<li class="op"><a href="#op-${escape(op.id)}">${escape(op.title)}</a></li>`).join("")
      }</ul>`
    ).join("")
  }<h2><a href="#schemas">Schemas</a></h2>`

/**
 * The page: a header, the navigation (a sidebar on wide screens, a "Contents" disclosure on narrow
 * ones), the guides, every operation by tag, and every named schema.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (document: Json, guides: ReadonlyArray<Guide>): string => {
  const link = resolveLink(guides.map((g) => g.id))
  const byTag = operationsOf(document)
  const info: Json = document.info ?? {}
  const title = `${info.title ?? "API"} reference`
  const nav = navigation(guides, byTag)
  const server = document.servers?.[0]?.url
  const guideSections = guides.map((g) =>
    `<section class="guide" id="${escape(g.id)}">${
      Markdown.render(g.markdown, { idPrefix: g.id, shiftHeadings: 1, link })
    }</section>`
  )
  const tagSections = [...byTag].map(([tag, operations]) => {
    const description = (document.tags ?? []).find((t: Json) => t.name === tag)?.description
    return `<section class="tag" id="tag-${escape(tag)}"><h2>${escape(tagTitle(tag))}</h2>${
      typeof description === "string" ? Markdown.render(description, { link }) : ""
    }${operations.map((op) => renderOperation(document, op, link)).join("\n")}</section>`
  })
  const schemas = Object.entries(document.components?.schemas ?? {}) as Array<[string, Json]>
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light">
<title>${escape(title)}</title>
<style>${css}</style>
</head>
<body>
<div class="layout">
<nav class="side" aria-label="Contents"><a class="brand" href="#top">${escape(title)}</a>${nav}</nav>
<div>
<header class="top" id="top">
<h1>${escape(title)}</h1>
<p>${inline(info.description ?? "")}</p>
<p>Version <code>${escape(String(info.version ?? ""))}</code>${
    server === undefined ? "" : ` · server <code>${escape(server)}</code>`
  } · the OpenAPI document: <a href="/v1/openapi.json">/v1/openapi.json</a></p>
<details class="toc"><summary>Contents</summary><nav aria-label="Contents (narrow screens)">${nav}</nav></details>
</header>
<main>
${guideSections.join("\n")}
${tagSections.join("\n")}
<section class="tag" id="schemas"><h2>Schemas</h2>
${schemas.map(([name, schema]) => renderSchema(name, schema, link)).join("\n")}
</section>
</main>
</div>
</div>
</body>
</html>
`
}
