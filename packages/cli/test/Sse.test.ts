import { describe, expect, it } from "vitest"
import { parse } from "../src/Sse.js"

describe("Sse.parse", () => {
  it("reads complete frames and keeps the start of the next one", () => {
    const { frames, rest } = parse(
      "retry: 1000\n: connected\n\nid: evt_1\nevent: transfer.arrived\ndata: {\"a\":1}\n\nid: evt_2\nda"
    )
    expect(frames).toEqual([
      { comments: ["connected"] },
      { id: "evt_1", event: "transfer.arrived", data: "{\"a\":1}", comments: [] }
    ])
    expect(rest).toBe("id: evt_2\nda")
    const next = parse(rest + "ta: x\ndata: y\n\n: heartbeat\n\n")
    expect(next.frames).toEqual([{ id: "evt_2", data: "x\ny", comments: [] }, { comments: ["heartbeat"] }])
    expect(next.rest).toBe("")
  })

  it("reads CRLF line ends and a value that itself has colons", () => {
    const { frames } = parse("id: evt_3\r\ndata: {\"t\":\"12:00\"}\r\n\r\n")
    expect(frames).toEqual([{ id: "evt_3", data: "{\"t\":\"12:00\"}", comments: [] }])
  })
})
