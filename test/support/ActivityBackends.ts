/**
 * Activity stores on the real backends, one fresh store per build: SQLite
 * in memory, PostgreSQL on its own tables (dropped afterwards), Redis under
 * its own key prefix (its keys deleted afterwards). See `Backends.ts` for
 * when PostgreSQL and Redis are available.
 */
import { Effect, Layer } from "effect"
import { Redis } from "ioredis"
import { ActivityStore } from "../../src/stores/ActivityStore.js"
import * as ActivityStoreRedis from "../../src/stores/redis/ActivityStoreRedis.js"
import * as Sqlite from "../../src/stores/sql/Sqlite.js"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { dropTables, postgresClient, redisUrl, uniquePrefix } from "./Backends.js"

/** A fresh SQLite activity store: a private in-memory database. */
export const sqliteActivityStore = (): Layer.Layer<ActivityStore> =>
  Layer.orDie(Sqlite.layerActivityStore({ filename: ":memory:" }))

/** A fresh PostgreSQL activity store: its own tables, dropped afterwards. */
export const postgresActivityStore = (): Layer.Layer<ActivityStore> => {
  const prefix = uniquePrefix()
  return SqlStores.layerActivityStore({ tablePrefix: prefix }).pipe(
    Layer.provideMerge(Layer.scopedDiscard(dropTables(prefix))),
    Layer.provide(postgresClient()),
    Layer.orDie
  )
}

/** Deletes every key under `prefix` when the scope closes. */
const deleteKeys = (url: string, prefix: string) =>
  Effect.addFinalizer(() =>
    Effect.promise(async () => {
      const client = new Redis(url)
      try {
        let cursor = "0"
        do {
          const [next, keys] = await client.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500)
          if (keys.length > 0) await client.del(...keys)
          cursor = next
        } while (cursor !== "0")
      } finally {
        await client.quit()
      }
    })
  )

/** A fresh Redis activity store: its own key prefix, its keys deleted afterwards. */
export const redisActivityStore = (): Layer.Layer<ActivityStore> => {
  const url = redisUrl ?? ""
  const keyPrefix = `eap-test:${uniquePrefix()}:`
  return ActivityStoreRedis.layer({ url, keyPrefix }).pipe(
    Layer.provideMerge(Layer.scopedDiscard(deleteKeys(url, keyPrefix))),
    Layer.orDie
  )
}
