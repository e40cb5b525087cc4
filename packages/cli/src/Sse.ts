/**
 * Server-sent events as `GET /v1/events/stream` writes them: frames of `field: value` lines ended
 * by a blank line; a line starting with `:` is a comment (the heartbeat).
 *
 * @since 0.1.0
 */

/**
 * One frame: its `id`, `event` and `data` (several `data` lines are joined with newlines), and
 * its comments.
 *
 * @since 0.1.0
 * @category models
 */
export interface Frame {
  readonly id?: string
  readonly event?: string
  readonly data?: string
  readonly comments: ReadonlyArray<string>
}

/**
 * The frames complete in `buffer`, and what is left of it (the start of the next frame).
 *
 * @since 0.1.0
 * @category parsing
 */
export const parse = (buffer: string): { readonly frames: ReadonlyArray<Frame>; readonly rest: string } => {
  const text = buffer.replaceAll("\r\n", "\n")
  const frames: Array<Frame> = []
  let start = 0
  for (let end = text.indexOf("\n\n", start); end >= 0; end = text.indexOf("\n\n", start)) {
    const fields: { id?: string; event?: string; data?: Array<string>; comments: Array<string> } = { comments: [] }
    for (const line of text.slice(start, end).split("\n")) {
      if (line === "") continue
      if (line.startsWith(":")) {
        fields.comments.push(line.slice(1).trim())
        continue
      }
      const colon = line.indexOf(":")
      const name = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "")
      if (name === "id") fields.id = value
      else if (name === "event") fields.event = value
      else if (name === "data") (fields.data ??= []).push(value)
    }
    frames.push({
      ...(fields.id === undefined ? {} : { id: fields.id }),
      ...(fields.event === undefined ? {} : { event: fields.event }),
      ...(fields.data === undefined ? {} : { data: fields.data.join("\n") }),
      comments: fields.comments
    })
    start = end + 2
  }
  return { frames, rest: text.slice(start) }
}
