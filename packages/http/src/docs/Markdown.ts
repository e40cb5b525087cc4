/**
 * The Markdown the docs page renders (the guides in `docs/guides/` and the OpenAPI document's
 * descriptions): ATX headings, paragraphs, fenced code, pipe tables, flat lists, block quotes, and
 * inline code, links, bold and emphasis. Everything else is text, escaped. No HTML passes through.
 *
 * @since 0.1.0
 */

/**
 * Escapes text for HTML content and attribute values.
 *
 * @since 0.1.0
 * @category rendering
 */
export const escape = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;")

/**
 * A heading's anchor: lower case, letters, digits and dashes (GitHub's rule, roughly).
 *
 * @since 0.1.0
 * @category rendering
 */
export const slug = (text: string): string =>
  text.toLowerCase().replace(/`/g, "").replace(/[^a-z0-9 _-]/g, "").trim().replace(/[ _]+/g, "-")

/**
 * How the page rewrites a link's target (a guide's `errors.md` becomes `#errors`); `undefined`
 * renders the link's text without a link.
 *
 * @since 0.1.0
 * @category models
 */
export type LinkResolver = (href: string) => string | undefined

/**
 * Options of a rendering.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Prefixed to every heading's anchor (the guide's id), so that anchors are unique on the page. */
  readonly idPrefix?: string
  /** Added to every heading's level (a guide's `#` becomes an `h2` with 1). */
  readonly shiftHeadings?: number
  readonly link?: LinkResolver
}

const keepLink: LinkResolver = (href) => href

/**
 * Renders inline Markdown: code spans first (their content is literal), then links, bold, emphasis.
 *
 * @since 0.1.0
 * @category rendering
 */
export const inline = (text: string, link: LinkResolver = keepLink): string =>
  text.split(/(`+[^`]*?`+)/).map((part, i) => {
    if (i % 2 === 1) return `<code>${escape(part.replace(/^`+ ?|`+$/g, "").replace(/ $/, ""))}</code>`
    return escape(part)
      .replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_all, label: string, href: string) => {
        const target = link(href.replace(/&amp;/g, "&"))
        return target === undefined ? label : `<a href="${escape(target)}">${label}</a>`
      })
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>")
      .replace(/(^|[\s(])\*([^*\s][^*]*)\*/g, "$1<em>$2</em>")
  }).join("")

const fence = /^(```|~~~)\s*([\w-]*)\s*$/
const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/
const bullet = /^\s{0,3}[-*]\s+(.*)$/
const ordered = /^\s{0,3}\d+[.)]\s+(.*)$/
const tableRow = /^\s*\|.*\|\s*$/
const tableRule = /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/

const cells = (row: string): Array<string> => {
  const inner = row.trim().replace(/^\|/, "").replace(/\|$/, "")
  // A pipe inside a code span (`a\|b` or `a|b`) does not split cells.
  const out: Array<string> = []
  let current = ""
  let code = false
  for (let i = 0; i < inner.length; i++) {
    const c = inner[i]!
    if (c === "\\" && inner[i + 1] === "|") {
      current += "|"
      i++
    } else if (c === "`") {
      code = !code
      current += c
    } else if (c === "|" && !code) {
      out.push(current.trim())
      current = ""
    } else {
      current += c
    }
  }
  out.push(current.trim())
  return out
}

/**
 * Renders a Markdown document to HTML. Headings get `id`s (prefixed), tables are wrapped in a
 * scrolling box so that a narrow screen never scrolls the page sideways.
 *
 * @since 0.1.0
 * @category rendering
 */
export const render = (markdown: string, options: Options = {}): string => {
  const link = options.link ?? keepLink
  const shift = options.shiftHeadings ?? 0
  const prefix = options.idPrefix === undefined ? "" : `${options.idPrefix}-`
  const lines = markdown.replace(/\r\n?/g, "\n").split("\n")
  const out: Array<string> = []
  let i = 0
  const isBlockStart = (line: string) =>
    fence.test(line) || heading.test(line) || bullet.test(line) || ordered.test(line) || tableRow.test(line) ||
    line.startsWith(">")
  while (i < lines.length) {
    const line = lines[i]!
    if (line.trim() === "") {
      i++
      continue
    }
    const open = fence.exec(line)
    if (open !== null) {
      const body: Array<string> = []
      i++
      while (i < lines.length && !lines[i]!.startsWith(open[1]!)) body.push(lines[i++]!)
      i++
      const lang = open[2] === "" ? "" : ` data-lang="${escape(open[2]!)}"`
      out.push(`<pre${lang}><code>${escape(body.join("\n"))}</code></pre>`)
      continue
    }
    const h = heading.exec(line)
    if (h !== null) {
      const level = Math.min(6, h[1]!.length + shift)
      out.push(`<h${level} id="${prefix}${slug(h[2]!)}">${inline(h[2]!, link)}</h${level}>`)
      i++
      continue
    }
    if (tableRow.test(line) && i + 1 < lines.length && tableRule.test(lines[i + 1]!)) {
      const head = cells(line)
      i += 2
      const rows: Array<Array<string>> = []
      while (i < lines.length && tableRow.test(lines[i]!)) rows.push(cells(lines[i++]!))
      out.push(
        `<div class="table"><table><thead><tr>${
          head.map((c) => `<th>${inline(c, link)}</th>`).join("")
        }</tr></thead><tbody>${
          rows.map((r) => `<tr>${head.map((_, j) => `<td>${inline(r[j] ?? "", link)}</td>`).join("")}</tr>`).join("")
        }</tbody></table></div>`
      )
      continue
    }
    const list = bullet.test(line) ? bullet : ordered.test(line) ? ordered : undefined
    if (list !== undefined) {
      const items: Array<string> = []
      while (i < lines.length) {
        const item = list.exec(lines[i]!)
        if (item !== null) {
          items.push(item[1]!)
        } else if (lines[i]!.trim() !== "" && /^\s+/.test(lines[i]!) && items.length > 0) {
          items[items.length - 1] += " " + lines[i]!.trim()
        } else if (
          lines[i]!.trim() === "" && i + 1 < lines.length && list.test(lines[i + 1]!)
        ) {
          // A blank line between items keeps the list going.
        } else {
          break
        }
        i++
      }
      const tag = list === bullet ? "ul" : "ol"
      out.push(`<${tag}>${items.map((item) => `<li>${inline(item, link)}</li>`).join("")}</${tag}>`)
      continue
    }
    if (line.startsWith(">")) {
      const quoted: Array<string> = []
      while (i < lines.length && lines[i]!.startsWith(">")) quoted.push(lines[i++]!.replace(/^>\s?/, ""))
      out.push(`<blockquote>${render(quoted.join("\n"), options)}</blockquote>`)
      continue
    }
    const paragraph: Array<string> = [line.trim()]
    i++
    while (i < lines.length && lines[i]!.trim() !== "" && !isBlockStart(lines[i]!)) paragraph.push(lines[i++]!.trim())
    out.push(`<p>${inline(paragraph.join(" "), link)}</p>`)
  }
  return out.join("\n")
}
