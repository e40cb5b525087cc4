/**
 * Sales and sales deliveries: a dispensary sells from its stock (packages with 2 or more left and
 * not on hold), one item per sale, to consumers or to its patients in turn; the first four sales
 * of the adult-use dispensary are delivered where the state has deliveries. Each sale draws from
 * its own stream, and faker is seeded per delivery.
 */
import { faker } from "@faker-js/faker/locale/en"
import type { Patient, Sale } from "@tracebridge/core"
import { Ids } from "@tracebridge/core"
import * as Seed from "../../Seed.js"
import type { FacilityData } from "../../World.js"
import type { Context } from "./context.js"
import { DAY, HOUR, isoTime, round, scopedOf, touch } from "./context.js"
import * as packages from "./packages.js"

/** Adds `count` sales of a dispensary (fewer if its stock runs out), taking what they sell from stock. */
export const generate = (
  ctx: Context,
  data: FacilityData,
  count: number,
  patients: ReadonlyArray<Patient.Patient>
): void => {
  const { profile, provider, ref, seed, world } = ctx
  const f = world.facilities.indexOf(data)
  for (let i = 0; i < count; i++) {
    const stock = data.packages.filter((p) => p.quantity >= 2 && !p.is_on_hold)
    if (stock.length === 0) return
    const pick = Seed.prng(seed, `sale:${f}`, i)
    const pkg = stock[Math.floor(pick() * stock.length)]!
    const quantity = 1 + Math.floor(pick() * 2)
    const unitPrice = round(8 + pick() * 7)
    // A read model without discounts (provider_a's) gets worlds without them.
    const discount = profile.discounts && i % 4 === 3 ? 1 : 0
    const at = ref - (7 - (i % 7)) * DAY + (10 + (i % 8)) * HOUR
    const providerId = String(profile.numeric("sale", f, i + 1))
    const patient = patients.length > 0 ? patients[i % patients.length]! : null
    const sale: Sale.Sale = {
      id: Ids.make("sale", provider, providerId),
      receipt_number: `R-${providerId}`,
      sale_date: isoTime(Math.min(at, ref - HOUR)),
      customer_type: patient === null ? "Consumer" : "Patient",
      patient_license: patient?.patient_license_number ?? null,
      caregiver_license: null,
      items: [{
        package_id: pkg.id,
        tag: pkg.tag,
        item_name: pkg.item_name,
        quantity,
        unit_of_measure: pkg.unit_of_measure,
        unit_price: unitPrice,
        discount,
        total: round(quantity * unitPrice - discount)
      }],
      total_price: round(quantity * unitPrice),
      total_discount: discount,
      ...scopedOf(ctx, data.facility),
      provider_sale_id: providerId
    }
    data.sales.push(sale)
    packages.setQuantity(ctx, data, pkg.id, pkg.quantity - quantity, Math.min(at, ref - HOUR))
    touch(ctx, sale.id, Math.min(at, ref - HOUR))
  }
}

/** Sets the deliveries of a dispensary: its first four sales, the first still in progress. */
export const deliveries = (ctx: Context, retail: FacilityData): void => {
  const { profile, provider, ref, seed, state } = ctx
  retail.salesDeliveries = retail.sales.slice(0, 4).map((sale, i) => {
    faker.seed(Seed.integer(seed, "delivery", i))
    const providerId = String(profile.numeric("delivery", 3, i + 1))
    const delivered = Date.parse(sale.sale_date) + 2 * HOUR
    const d = {
      id: Ids.make("sales_delivery", provider, providerId),
      recipient_name: faker.person.fullName(),
      recipient_city: faker.location.city(),
      recipient_state: state,
      delivery_date: isoTime(Math.min(delivered, ref)),
      customer_type: sale.customer_type,
      patient_license: sale.patient_license,
      status: i === 0 ? "InProgress" : "Completed",
      items: sale.items.map((it) => ({
        package_id: it.package_id,
        item_name: it.item_name,
        unit_of_measure: it.unit_of_measure,
        quantity: it.quantity
      })),
      ...scopedOf(ctx, retail.facility),
      provider_delivery_id: providerId
    }
    touch(ctx, d.id, Math.min(delivered, ref))
    return d
  })
}
