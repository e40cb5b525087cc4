/**
 * The provider_a driver: every read and write of the port, over the client. It assembles one
 * driver per resource (`resources/`) from the shared reading tools (`reader.ts`), the package
 * enrichment (`enrich.ts`) and the writes (`writes.ts`). Caches live as long as the driver.
 */
import type { ProviderPort } from "@tracebridge/core"
import type { Client } from "../ProviderAClient.js"
import type { Settings } from "../ProviderAConfig.js"
import { descriptor } from "./descriptor.js"
import { makeEnricher } from "./enrich.js"
import { makeReader } from "./reader.js"
import { items, locations, patients, strains } from "./resources/catalogue.js"
import { checkCredentials, listFacilities } from "./resources/facilities.js"
import { harvests } from "./resources/harvests.js"
import { labResults } from "./resources/labResults.js"
import { packages } from "./resources/packages.js"
import { plants } from "./resources/plants.js"
import { sales, salesDeliveries } from "./resources/sales.js"
import { transfers } from "./resources/transfers.js"
import { makeWrites } from "./writes.js"

/** The provider_a driver: every read and write of the port, over the client. */
export const makeDriver = (client: Client, settings: Settings): ProviderPort.Driver => {
  const reader = makeReader(client, settings)
  const enricher = makeEnricher(reader)
  const transferDriver = transfers(reader)
  return {
    descriptor,
    checkCredentials: checkCredentials(reader),
    listFacilities: listFacilities(reader),
    resources: {
      packages: packages(reader, enricher),
      plants: plants(reader),
      harvests: harvests(reader),
      lab_results: labResults(reader, enricher),
      transfers: transferDriver,
      sales: sales(reader),
      sales_deliveries: salesDeliveries(reader),
      items: items(reader),
      strains: strains(reader),
      locations: locations(reader),
      patients: patients(reader)
    },
    writes: makeWrites(reader, enricher, transferDriver)
  }
}
