/**
 * A body each write would accept from its rightful caller, by operation id: the authorisation matrix
 * sends them so that its refusals are about the token, and the fuzzer mutates them.
 */
export const sampleBodies = (pkg: string, name = "Sample"): Record<string, unknown> => ({
  createLinkToken: { external_id: name.toLowerCase() },
  exchangePublicToken: { public_token: "public-sandbox-unknown" },
  createSandboxPublicToken: { provider: "provider_a", state: "CO" },
  createPackage: {
    item_name: `${name} Buds`,
    item_category: "Flower",
    quantity: 1,
    unit_of_measure: "Grams",
    source_package_ids: [pkg]
  },
  createLabResult: {
    package_id: pkg,
    lab_name: `${name} Labs`,
    overall_passed: true,
    results: [{ name: "THC", category: "potency", value: 20, unit: "%", passed: true, notes: null }]
  },
  createTransfer: {
    transfer_type: "Transfer",
    shipper_facility: "SBX-1",
    recipient_facility: "SBX-2",
    packages: [{ package_id: pkg, tag: "1A4", item_name: `${name} Buds`, quantity: 1, unit_of_measure: "Grams" }]
  },
  simulateScenario: { scenario: "transfer_arrived" },
  setSandboxFault: { kind: "outage" },
  createWebhook: { url: "http://127.0.0.1:9/hook", events: ["transfer.arrived"] },
  updateWebhook: { description: name.toLowerCase() }
})
