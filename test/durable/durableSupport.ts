/**
 * What the durable tests share: unique cluster table prefixes on the test
 * database, and dropping them afterwards.
 */
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { dropTables } from "../../src/durable/internal/durableStorage.js"
import { postgresClient } from "../support/Backends.js"

let prefixes = 0
/** A cluster table prefix no other test (in this run or another) uses. */
export const uniqueClusterPrefix = (): string =>
  `eap_t${process.pid}_${Date.now().toString(36)}_${(prefixes++).toString(36)}`

/** Drops every table of a cluster prefix on the test database. */
export const dropClusterTables = (prefix: string): Promise<void> =>
  Effect.runPromise(
    Effect.flatMap(SqlClient, (sql) => dropTables(sql, prefix)).pipe(Effect.orDie, Effect.provide(postgresClient()))
  )
