/**
 * Every configuration value the service reads, in one place, from the environment.
 *
 * @since 0.1.0
 */
import { Config } from "effect"

/**
 * `PORT` (default 8080) and `HOST` (default 127.0.0.1; set 0.0.0.0 in a container).
 *
 * @since 0.1.0
 * @category config
 */
export const server = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
})
