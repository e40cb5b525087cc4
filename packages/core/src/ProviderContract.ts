/**
 * The conformance kit: the checks every adapter must pass, as data that any test runner can
 * execute (core does not depend on one). A check is a name and an Effect that needs the port
 * under test and a fixture, and fails with a `ContractViolation` (or the provider error that
 * broke it).
 *
 * What it proves, for one state of a provider (see `docs/adding-a-provider.md`, "What the
 * conformance kit proves"):
 * - the descriptor's claims: complete, base URLs for the state, the port reports the state's
 *   capabilities, every claimed resource answers and every unclaimed one (its list, each of its
 *   filters and a get) is `CapabilityNotEnabled`, every declared write works and every undeclared
 *   one is `CapabilityNotEnabled`;
 * - transfer writes: the parties are taken by `fac_…` id, licence number or exact name, and an
 *   unknown, foreign or wrong one is `InvalidInput` at its field; a line of part of a package is
 *   shipped as asked or refused at `packages.0.quantity`, never recorded as the whole package, and
 *   a line above what the package holds is `InsufficientQuantity`;
 * - paging: consistent totals, per_page 1 walks every item once in order, per_page 100 covers the
 *   list, a page past the end is empty with the true total;
 * - every filter of every claimed list (the filters of `Query`, found from `Resource`): for values
 *   taken from the unfiltered list, their edges, and values matching nothing, the filtered list
 *   holds exactly the unfiltered items that pass;
 * - every error kind: the ones the kit provokes itself ({@link errorCoverage}) and the
 *   provider-side ones the fixture arranges ({@link providerSideKinds}); a kind the fixture neither
 *   arranges nor declares not applicable, with a reason, fails a check that names it.
 *
 * @example
 * ```ts
 * // adapter-provider-x/test/ProviderX.test.ts
 * import { describe, it } from "@effect/vitest"
 * import { ProviderContract } from "@tracebridge/core"
 *
 * describe.sequential("ProviderX conformance", () => {
 *   for (const check of ProviderContract.checksFor(ProviderX.descriptor, "CO")) {
 *     it.effect(check.name, () => check.run.pipe(Effect.provide(PortAndFixture)))
 *   }
 * })
 * ```
 *
 * Run the checks in order (writes come last and change the data the earlier checks read).
 *
 * This module is the kit's one face: each family of checks is a module of its own under
 * `internal/contract/` (the descriptor and sessions, facilities, reads, paging, filters,
 * capabilities, failures, writes, transfers), and `checksFor` composes them.
 *
 * @since 0.1.0
 */
import * as Capabilities from "./Capabilities.js"
import { disabledCheck, undeclaredWrite } from "./internal/contract/capabilities.js"
import { descriptorChecks } from "./internal/contract/descriptor.js"
import { facilityChecks } from "./internal/contract/facilities.js"
import { failureCoverageCheck, failureKindCheck, otherFailuresCheck } from "./internal/contract/failures.js"
import { filterCheck, filtersOf as filtersOfList } from "./internal/contract/filters.js"
import type { Check } from "./internal/contract/model.js"
import { providerSideKinds } from "./internal/contract/model.js"
import { pagingCheck, walkCheck } from "./internal/contract/paging.js"
import { claimedCheck, fieldsCheck, getCheck, notFoundCheck } from "./internal/contract/reads.js"
import {
  invalidWriteCheck,
  labResultByLabCheck,
  productionRefusal,
  writeChecks,
  writeNeedsCheck
} from "./internal/contract/writes.js"
import * as Page from "./Page.js"
import type { ProviderDescriptor, WriteName } from "./ProviderDescriptor.js"
import type { UsState } from "./ProviderName.js"
import * as Resource from "./Resource.js"

export type { Check, FailureCase, FilterKey, Fixture } from "./internal/contract/model.js"
export { ContractFixture, ContractViolation, errorCoverage, providerSideKinds } from "./internal/contract/model.js"

/**
 * The filters of a resource's list, read from its query schema (`Query`), so a filter added there
 * gets a check here (which fails until the kit knows how to check it).
 *
 * @since 0.1.0
 * @category reflection
 */
export const filtersOf: (name: Resource.Name) => ReadonlyArray<string> = filtersOfList

/**
 * Every write a descriptor may declare.
 *
 * @since 0.1.0
 * @category constants
 */
export const writeNames: ReadonlyArray<WriteName> = ["split_package", "record_lab_result", "create_transfer"]

/**
 * The checks for one state of a provider, in the order to run them: the descriptor and sessions,
 * credentials, facilities, each resource (claimed ones for paging, gets, fields, unknown ids and
 * every filter; unclaimed ones for `CapabilityNotEnabled`), provider failures, then writes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const checksFor = (descriptor: ProviderDescriptor, state: UsState): ReadonlyArray<Check> => {
  const capabilities = descriptor.capabilities[state]
  if (capabilities === undefined) throw new Error(`${descriptor.name} does not serve ${state}`)
  const resourceChecks = Resource.names.flatMap((name) =>
    Resource.resources[name].enabled(capabilities)
      ? [
        claimedCheck(name, state),
        pagingCheck(name),
        walkCheck(name, 1, "per_page 1 walks every item exactly once, in order"),
        walkCheck(name, Page.MAX_PER_PAGE, `per_page ${Page.MAX_PER_PAGE} (the most) covers the list in order`),
        getCheck(name),
        fieldsCheck(name),
        notFoundCheck(name, descriptor),
        ...filtersOf(name).map((filter) => filterCheck(name, filter))
      ]
      : [disabledCheck(name, state)]
  )
  return [
    ...descriptorChecks(state),
    ...facilityChecks,
    ...resourceChecks,
    failureCoverageCheck,
    ...providerSideKinds.map(failureKindCheck),
    otherFailuresCheck,
    ...writeNames.filter((w) => !descriptor.writes.includes(w)).map(undeclaredWrite),
    ...(descriptor.writes.length > 0 ? [productionRefusal] : []),
    ...descriptor.writes.flatMap((w) => [invalidWriteCheck(w), ...writeChecks[w]]),
    ...descriptor.writes.flatMap((w) => {
      const needs = descriptor.writeNeeds?.[w]
      if (needs === undefined) return []
      return [w === "record_lab_result" ? labResultByLabCheck(needs) : writeNeedsCheck(w, needs)]
    })
  ]
}

/**
 * The generated filter checks on their own: for every claimed list of the state, one check per
 * filter of its query schema (`filtersOf`), that the filtered list holds exactly the items of the
 * full list whose field matches. {@link checksFor} runs them with the rest; this is for running
 * them where the rest cannot run, e.g. with a production session against a strict emulator
 * (no writes, no arranged failures).
 *
 * @since 0.1.0
 * @category constructors
 */
export const filterChecksFor = (descriptor: ProviderDescriptor, state: UsState): ReadonlyArray<Check> => {
  const capabilities = descriptor.capabilities[state]
  if (capabilities === undefined) throw new Error(`${descriptor.name} does not serve ${state}`)
  return Resource.names.flatMap((name) =>
    Resource.resources[name].enabled(capabilities)
      ? [pagingCheck(name), ...filtersOf(name).map((filter) => filterCheck(name, filter))]
      : []
  )
}

/**
 * The flag names the kit knows, re-exported for adapters that document their capability tables.
 *
 * @since 0.1.0
 * @category constants
 */
export const capabilityFlags = Capabilities.flags
