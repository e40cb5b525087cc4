import { assert, describe, it } from "@effect/vitest"
import { Envelope, Page } from "@tracebridge/core"
import { Effect, Either, FastCheck, Schema } from "effect"

const decode = Schema.decodeUnknownEither(Page.PageRequest)

describe("Page", () => {
  describe("PageRequest", () => {
    it("defaults to page 1 of 25", () => {
      assert.deepStrictEqual(decode({}), Either.right({ page: 1, per_page: 25 }))
    })

    it("reads strings of numbers", () => {
      assert.deepStrictEqual(decode({ page: "3", per_page: "100" }), Either.right({ page: 3, per_page: 100 }))
      assert.deepStrictEqual(decode({ page: "1", per_page: "1" }), Either.right({ page: 1, per_page: 1 }))
    })

    it("refuses per_page outside 1..100, page below 1, and anything not digits", () => {
      for (
        const bad of [
          { per_page: "0" },
          { per_page: "101" },
          { page: "0" },
          { page: "-1" },
          { page: "1.5" },
          { page: " 1" },
          { page: "1e2" },
          { page: "abc" },
          { page: "" },
          { per_page: "9999999999" },
          { page: 2 }
        ]
      ) {
        assert.isTrue(Either.isLeft(decode(bad)), JSON.stringify(bad))
      }
    })

    it("names the offending parameter and says why", () => {
      const result = decode({ per_page: "500" })
      assert.isTrue(Either.isLeft(result))
      if (Either.isLeft(result)) assert.include(String(result.left), "per_page must be between 1 and 100")
    })
  })

  describe("paginate", () => {
    const items = Array.from({ length: 45 }, (_, i) => i)

    it("serves full pages, a partial last page and an empty page past the end", () => {
      assert.deepStrictEqual(Page.paginate(items, { page: 1, per_page: 25 }), {
        items: items.slice(0, 25),
        pagination: { page: 1, per_page: 25, total: 45, total_pages: 2 }
      })
      assert.deepStrictEqual(Page.paginate(items, { page: 2, per_page: 25 }).items, items.slice(25))
      assert.deepStrictEqual(Page.paginate(items, { page: 3, per_page: 25 }), {
        items: [],
        pagination: { page: 3, per_page: 25, total: 45, total_pages: 2 }
      })
    })

    it("gives zero pages for an empty list", () => {
      assert.deepStrictEqual(Page.paginate([], { page: 1, per_page: 25 }).pagination, {
        page: 1,
        per_page: 25,
        total: 0,
        total_pages: 0
      })
    })
  })

  describe("providerPages", () => {
    it("maps our pages onto the provider's pages of 20", () => {
      assert.deepStrictEqual(Page.providerPages({ offset: 25, limit: 25 }, 20), { first: 2, last: 3, skip: 5 })
      assert.deepStrictEqual(Page.providerPages({ offset: 0, limit: 100 }, 20), { first: 1, last: 5, skip: 0 })
      assert.deepStrictEqual(Page.providerPages({ offset: 40, limit: 20 }, 20), { first: 3, last: 3, skip: 0 })
    })
  })

  describe("fetchWindow", () => {
    const provider = (all: ReadonlyArray<number>, calls: Array<number>) => (page: number, size: number) =>
      Effect.sync(() => {
        calls.push(page)
        return { items: all.slice((page - 1) * size, page * size), total: all.length }
      })

    it.effect.prop(
      "reads exactly what paginate would, touching only the provider pages it needs",
      [
        FastCheck.integer({ min: 0, max: 250 }),
        FastCheck.integer({ min: 1, max: 30 }),
        FastCheck.integer({ min: 1, max: 12 }),
        FastCheck.integer({ min: 1, max: 100 })
      ],
      ([length, pageSize, page, perPage]) =>
        Effect.gen(function*() {
          const all = Array.from({ length }, (_, i) => i)
          const calls: Array<number> = []
          const request = { page, per_page: perPage }
          const slice = yield* Page.fetchWindow(Page.toWindow(request), pageSize, provider(all, calls))
          assert.deepStrictEqual(Page.fromSlice(request, slice), Page.paginate(all, request))
          const { first, last } = Page.providerPages(Page.toWindow(request), pageSize)
          const lastAvailable = Math.ceil(length / pageSize)
          assert.strictEqual(calls.length, 1 + Math.max(0, Math.min(last, lastAvailable) - first))
        })
    )
  })

  describe("Envelope", () => {
    it("encodes a paginated list with meta", () => {
      const schema = Envelope.Paginated(Schema.Number)
      const body = {
        data: [1, 2],
        meta: {
          request_id: "req_1",
          timestamp: "2026-01-01T00:00:00Z",
          provider: "provider_a" as const,
          state: "CO" as const,
          skipped: [{ upstream_id: "1004", reason: "Quantity: expected a number" }]
        },
        pagination: { page: 1, per_page: 25, total: 2, total_pages: 1 }
      }
      assert.deepStrictEqual(Schema.encodeSync(schema)(body), body)
      // a list's meta always says what was skipped, if only []
      const { skipped: _, ...withoutSkipped } = body.meta
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(schema)({ ...body, meta: withoutSkipped })))
      assert.isTrue(Either.isLeft(Schema.decodeUnknownEither(schema)({ ...body, meta: { request_id: "x" } })))
    })
  })
})
