import type { Facility, Session } from "@tracebridge/core"
import { Clock, Effect, Schema as S } from "effect"
import { toFacility } from "../mappers/toFacility.js"
import type { Err, Reader } from "../reader.js"
import { map } from "../reader.js"
import { FacilityV2 } from "../wire/Facility.js"

/** The login's facilities (`/facilities/v2/`, a bare array); a licence past its end date is inactive. */
export const listFacilities =
  ({ client }: Reader) => (session: Session.Session): Effect.Effect<ReadonlyArray<Facility.Facility>, Err> =>
    Effect.gen(function*() {
      const rows = yield* client.get(session, "/facilities/v2/", S.Array(FacilityV2), { operation: "facilities.list" })
      const now = yield* Clock.currentTimeMillis
      const today = new Date(now).toISOString().slice(0, 10)
      return yield* Effect.forEach(
        rows,
        map("facilities.list", (w: typeof FacilityV2.Type) => toFacility(w, { state: session.state, today }))
      )
    })

/** Checks a login by reading its facilities. */
export const checkCredentials = ({ client }: Reader) => (session: Session.Session): Effect.Effect<void, Err> =>
  Effect.asVoid(client.get(session, "/facilities/v2/", S.Array(FacilityV2), { operation: "credentials.check" }))
