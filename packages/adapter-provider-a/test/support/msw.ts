import { setupServer } from "msw/node"
import { afterAll, afterEach, beforeAll } from "vitest"
import { handler } from "./FakeMetrc.js"

/** Starts msw for the file: every request goes to a FakeMetrc by host; anything else is an error. */
export const useMsw = () => {
  const server = setupServer(handler)
  beforeAll(() => server.listen({ onUnhandledRequest: "error" }))
  afterEach(() => server.resetHandlers())
  afterAll(() => server.close())
  return server
}
