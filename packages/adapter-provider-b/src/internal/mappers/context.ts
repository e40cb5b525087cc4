/**
 * What every mapper needs: the facility whose list the object belongs to.
 */
import { Ids } from "@tracebridge/core"

/** The provider wire value. */
export const PROVIDER = "provider_b" as const

/** The mapping context. */
export interface Context {
  readonly facility_id: Ids.FacilityId
}

/** Tracebridge ids of provider_b objects. */
export const id = <K extends Ids.Kind>(kind: K, providerId: string): Ids.IdOf[K] => Ids.make(kind, PROVIDER, providerId)
