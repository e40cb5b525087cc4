// Node module hooks that print every module URL the process loads (one per line, "LOADED <url>").
import { register } from "node:module"

register("data:text/javascript," + encodeURIComponent(`
export async function load(url, context, next) {
  process.stderr.write("LOADED " + url + "\\n")
  return next(url, context)
}
`))
