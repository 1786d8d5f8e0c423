/**
 * How a SQLite connection reads for a vector search. An exact search reads
 * every item of its partition, and an item of a few hundred dimensions fills
 * a page of its own (512 float32s are 2 KiB: two never share a 4 KiB page),
 * so one search of 100,000 items touches 100,000 pages. Through SQLite's
 * page cache (2 MiB by default) each is a `pread` and a copy, every search —
 * about 2.8 µs a page, some two thirds of the search's time (measured with
 * `sqlite-vec`, 100,000 × 512). Memory-mapping the file reads them in place
 * from the operating system's cache instead, with no private memory kept.
 * The setting is the connection's: the other stores sharing it read the
 * same way.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Effect } from "effect"
import { errorDetail } from "../../internal/errorDetail.js"

/**
 * How much of the file may be mapped: SQLite's default compiled maximum
 * (just under 2 GiB; a larger request is cut to the build's maximum). It is
 * address space, not memory: only the file's own size is mapped, and a
 * larger file reads the rest through the page cache.
 */
export const mappedBytes = 0x7fff0000

/**
 * Maps the database file for reads (`PRAGMA mmap_size`) unless the
 * connection already maps it — a size set by whoever opened the connection
 * is kept. A no-op on other dialects and for in-memory databases; a failure
 * only logs (the searches stay correct, only slower).
 */
export const mapForScans = (sql: SqlClient): Effect.Effect<void> =>
  sql.onDialectOrElse({
    sqlite: () =>
      Effect.gen(function*() {
        const rows = yield* sql<{ readonly mmap_size: number | bigint }>`PRAGMA mmap_size`
        if (Number(rows[0]?.mmap_size ?? 0) > 0) return
        // PRAGMA arguments cannot be bound parameters; the size is a constant.
        yield* sql.unsafe(`PRAGMA mmap_size = ${mappedBytes}`)
      }).pipe(
        Effect.catchAll((error) =>
          Effect.logDebug(`vector search reads through the page cache: mmap_size not set (${errorDetail(error)})`)
        )
      ),
    orElse: () => Effect.void
  })
