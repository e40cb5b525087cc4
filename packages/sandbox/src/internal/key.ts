/**
 * The key of a world: its provider, state and login (re-exported as `Sandbox.keyOf`; here so that
 * `Faults` and `Sandbox` can both use it without importing each other).
 */
export const keyOf = (provider: string, state: string, login: string) => `${provider}|${state}|${login}`
