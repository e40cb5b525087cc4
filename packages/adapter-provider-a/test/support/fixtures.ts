/**
 * The synthetic Metrc records of `../fixtures`, written from the research payloads (one record per
 * file, or the facilities' array), read fresh on every call so that a test may change its copy.
 */
import { readFileSync } from "node:fs"

export const fixture = (name: string): any =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}.json`, import.meta.url), "utf8"))
