/**
 * The VectorStore over `@effect/sql` (SQLite and PostgreSQL), on the table
 * the migrations made. A search is exact (every candidate is scored) and
 * filtered in SQL — collection, partition, dimensions, expiry, keys — so the
 * extension modes (`sqlite-vec`'s `vec_distance_cosine`, pgvector's `<=>`)
 * and brute force return the same items; only SQLite's brute force scores in
 * JavaScript (without the extension SQLite has no function to call), reading
 * only the ranking columns and then the hits' rows, in one transaction.
 *
 * @since 0.1.0
 */
import { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Either, Option } from "effect"
import {
  type Item,
  type Scored,
  type SearchPreference,
  VectorStore,
  VectorStoreError
} from "../contract/VectorStore.js"
import { errorDetail } from "../internal/errorDetail.js"
import {
  checkGet,
  checkPut,
  checkRecent,
  checkRemove,
  checkSearch,
  cosineOf,
  parsePayload,
  topK
} from "../internal/vectorInput.js"
import { resolveMode } from "./internal/vectorMode.js"
import { mapForScans } from "./internal/vectorReads.js"
import type { Tables } from "./migrations.js"

type Operation = VectorStoreError["operation"]

const backendError = (operation: Operation) => (error: SqlError) =>
  new VectorStoreError({ operation, reason: "backend", detail: errorDetail(error), cause: error })

/** A stored row, as either driver returns it. */
interface Row {
  readonly collection: string
  readonly item_id: string
  readonly partition_key: string
  readonly created_at: number | string
  readonly expires_at: number | string | null
  readonly dim_keys: unknown
  readonly embedding: unknown
  readonly content: string
  readonly payload: string
  readonly score?: number | string | null
}

/** A float32 vector from a SQLite BLOB or a PostgreSQL `real[]` (parsed, or as text). */
const vectorOf = (value: unknown): Float32Array | undefined => {
  if (value instanceof Uint8Array) {
    if (value.byteLength % 4 !== 0) return undefined
    // A copy: the driver's buffer need not be 4-byte aligned.
    return new Float32Array(value.slice().buffer)
  }
  const list = typeof value === "string" ? value.replace(/^\{|\}$/g, "").split(",") : value
  if (!Array.isArray(list)) return undefined
  const vector = Float32Array.from(list, Number)
  return vector.every(Number.isFinite) ? vector : undefined
}

const keysOf = (value: unknown): Record<string, string> | undefined => {
  let parsed: unknown = value
  if (typeof value === "string") {
    try {
      parsed = JSON.parse(value)
    } catch {
      return undefined
    }
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined
  const keys: Record<string, string> = {}
  for (const [name, v] of Object.entries(parsed)) {
    if (typeof v !== "string") return undefined
    keys[name] = v
  }
  return keys
}

/** A row back into an item; one that does not decode is a `corrupt` error naming it. */
const itemOf = (operation: Operation) => (row: Row): Either.Either<Item, VectorStoreError> => {
  const keys = keysOf(row.dim_keys)
  const payload = parsePayload(row.payload)
  const embedding = row.embedding === null ? undefined : vectorOf(row.embedding)
  if (keys === undefined || payload === undefined || (row.embedding !== null && embedding === undefined)) {
    return Either.left(
      new VectorStoreError({
        operation,
        reason: "corrupt",
        detail: `stored item ${row.collection}/${row.item_id} does not decode`
      })
    )
  }
  return Either.right({
    collection: row.collection,
    id: row.item_id,
    partition: row.partition_key,
    keys,
    text: row.content,
    payload,
    ...(embedding === undefined ? {} : { embedding: Array.from(embedding) }),
    createdAt: Number(row.created_at),
    ...(row.expires_at === null ? {} : { expiresAt: Number(row.expires_at) })
  })
}

const columns = "collection, item_id, partition_key, created_at, expires_at, dim_keys, embedding, content, payload"

/**
 * Builds the store over the current `SqlClient`, on tables the migrations
 * made (`SqlStores.layerVectorStore` migrates first). How it ranks
 * (`preference`, default `auto`) is decided on first use: see `mode`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  tables: Pick<Tables, "vectors">,
  options: { readonly search?: SearchPreference | undefined } = {}
): Effect.Effect<VectorStore.Service, never, SqlClient> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient
    const table = sql(tables.vectors)
    const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
    // The file is mapped with the first use of the ranking, as the extension is loaded.
    const mode = yield* Effect.cached(Effect.zipLeft(resolveMode(sql, options.search ?? "auto"), mapForScans(sql)))

    const pgArray = (vector: Float32Array) => `{${vector.join(",")}}`
    const blob = (vector: Float32Array) => new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)

    /** The filters every read shares: one partition's live items with the keys. */
    const live = (
      collection: string,
      partition: string | undefined,
      keys: Readonly<Record<string, string>>,
      now: number | undefined
    ) => {
      const clauses = [sql`collection = ${collection}`]
      if (partition !== undefined) clauses.push(sql`partition_key = ${partition}`)
      if (now !== undefined) clauses.push(sql`(expires_at IS NULL OR expires_at > ${now})`)
      if (isPg && Object.keys(keys).length > 0) clauses.push(sql`dim_keys @> ${JSON.stringify(keys)}::jsonb`)
      // Key names are letters, digits, "_" and "-" (checked at the edge): safe in a quoted JSON path.
      if (!isPg) {
        for (const [name, value] of Object.entries(keys)) {
          clauses.push(sql`json_extract(dim_keys, ${`$."${name}"`}) = ${value}`)
        }
      }
      return sql.and(clauses)
    }

    const decodeAll = (operation: Operation, rows: ReadonlyArray<Row>) =>
      Effect.forEach(rows, (row) => itemOf(operation)(row))

    const put = Effect.fn("VectorStore.put")(function*(input: Parameters<VectorStore.Service["put"]>[0]) {
      const checked = yield* checkPut(input, yield* Clock.currentTimeMillis)
      const { item, vector } = checked
      const embedding = vector === undefined ? null : vector
      yield* sql`INSERT INTO ${table} (${sql.literal(columns)}, dims, norm)
        VALUES (${item.collection}, ${item.id}, ${item.partition}, ${item.createdAt}, ${item.expiresAt ?? null},
          ${isPg ? sql`${checked.keysJson}::jsonb` : checked.keysJson},
          ${embedding === null ? null : isPg ? sql`${pgArray(embedding)}::real[]` : blob(embedding)},
          ${item.text}, ${checked.payloadJson}, ${vector?.length ?? 0}, ${checked.norm})
        ON CONFLICT (collection, item_id) DO UPDATE SET
          partition_key = excluded.partition_key, created_at = excluded.created_at,
          expires_at = excluded.expires_at, dim_keys = excluded.dim_keys, embedding = excluded.embedding,
          content = excluded.content, payload = excluded.payload, dims = excluded.dims, norm = excluded.norm`
        .pipe(Effect.mapError(backendError("put")))
      return item
    })

    const get = Effect.fn("VectorStore.get")(function*(key: Parameters<VectorStore.Service["get"]>[0]) {
      yield* checkGet(key)
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql<Row>`SELECT ${sql.literal(columns)} FROM ${table}
        WHERE collection = ${key.collection} AND item_id = ${key.id}
          AND (expires_at IS NULL OR expires_at > ${now})`.pipe(Effect.mapError(backendError("get")))
      return rows[0] === undefined ? Option.none() : Option.some(yield* itemOf("get")(rows[0]))
    })

    const unflattened = sql.onDialectOrElse({ sqlite: () => sql.literal(" LIMIT -1"), orElse: () => sql.literal("") })

    /**
     * Ranking in SQL: the best `limit` ids by `score`, then their rows — one
     * statement. The score sits in a CASE on the dimensions: a planner may
     * push `score >= min` ahead of `dims = …`, and pgvector and sqlite-vec
     * raise an error on vectors of other dimensions rather than skip them.
     * On SQLite the scored subquery carries `LIMIT -1` (no limit): SQLite
     * would otherwise flatten it into the outer query and compute the
     * distance once for `score >= min` and again for the sort — a third of
     * a search's time on a large partition.
     */
    const rankInSql = (
      candidates: ReturnType<typeof live>,
      score: ReturnType<typeof sql.literal>,
      collection: string,
      dims: number,
      minScore: number,
      limit: number
    ) =>
      sql<Row>`SELECT ${sql.literal(columns.split(", ").map((c) => `v.${c}`).join(", "))}, r.score FROM (
          SELECT item_id, created_at, score FROM (
            SELECT item_id, created_at,
              CASE WHEN dims = ${dims} AND norm > 0 THEN ${score} END AS score
            FROM ${table}
            WHERE ${candidates} AND dims = ${dims} AND norm > 0${unflattened}
          ) s WHERE score >= ${minScore}
          ORDER BY score DESC, created_at DESC, item_id ASC LIMIT ${limit}
        ) r JOIN ${table} v ON v.collection = ${collection} AND v.item_id = r.item_id
        ORDER BY r.score DESC, r.created_at DESC, r.item_id ASC`

    /** SQLite without the extension: the ranking columns scored in JavaScript, then the hits' rows. */
    const rankInJs = (
      candidates: ReturnType<typeof live>,
      query: { readonly vector: Float32Array; readonly norm: number },
      collection: string,
      minScore: number,
      limit: number
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{
          readonly item_id: string
          readonly created_at: number
          readonly norm: number
          readonly embedding: unknown
        }>`SELECT item_id, created_at, norm, embedding FROM ${table}
          WHERE ${candidates} AND dims = ${query.vector.length} AND norm > 0`
        const best = topK<{ readonly score: number; readonly createdAt: number; readonly id: string }>(limit)
        for (const row of rows) {
          const vector = vectorOf(row.embedding)
          if (vector === undefined || vector.length !== query.vector.length) continue
          const score = cosineOf(query.vector, query.norm, vector, Number(row.norm))
          if (score >= minScore) best.offer({ score, createdAt: Number(row.created_at), id: row.item_id })
        }
        const hits = best.result()
        if (hits.length === 0) return []
        const full = yield* sql<Row>`SELECT ${sql.literal(columns)} FROM ${table}
          WHERE collection = ${collection} AND ${sql.in("item_id", hits.map((h) => h.id))}`
        const byId = new Map(full.map((row) => [row.item_id, row]))
        return hits.flatMap((hit) => {
          const row = byId.get(hit.id)
          return row === undefined ? [] : [{ ...row, score: hit.score }]
        })
      }))

    const search = Effect.fn("VectorStore.search")(function*(query: Parameters<VectorStore.Service["search"]>[0]) {
      const checked = yield* checkSearch(query)
      const ranking = yield* mode
      yield* Effect.annotateCurrentSpan("vector.mode", ranking)
      if (checked.norm === 0) return []
      const now = yield* Clock.currentTimeMillis
      const candidates = live(query.collection, query.partition, checked.keys, now)
      // Scores are −1..1: below −2 is "no minimum".
      const minScore = query.minScore ?? -2
      const rows = yield* (
        ranking === "brute-force" && !isPg
          ? rankInJs(candidates, checked, query.collection, minScore, query.limit)
          : rankInSql(
            candidates,
            ranking === "sqlite-vec"
              ? sql`1 - vec_distance_cosine(embedding, ${blob(checked.vector)})`
              : ranking === "pgvector"
              ? sql`1 - (embedding::vector <=> ${`[${checked.vector.join(",")}]`}::vector)`
              : sql`(SELECT SUM(a::float8 * b::float8) FROM unnest(embedding, ${
                pgArray(checked.vector)
              }::real[]) AS u(a, b)) / (norm * ${checked.norm})`,
            query.collection,
            checked.vector.length,
            minScore,
            query.limit
          )
      ).pipe(Effect.mapError(backendError("search")))
      return yield* Effect.forEach(rows, (row) =>
        Effect.map(itemOf("search")(row), (item): Scored => ({ item, score: Number(row.score) })))
    })

    const recent = Effect.fn("VectorStore.recent")(function*(query: Parameters<VectorStore.Service["recent"]>[0]) {
      const keys = yield* checkRecent(query)
      const now = yield* Clock.currentTimeMillis
      const rows = yield* sql<Row>`SELECT ${sql.literal(columns)} FROM ${table}
        WHERE ${live(query.collection, query.partition, keys, now)} AND created_at >= ${query.since ?? 0}
        ORDER BY created_at DESC, item_id ASC LIMIT ${query.limit}`.pipe(Effect.mapError(backendError("recent")))
      return yield* decodeAll("recent", rows)
    })

    const remove = Effect.fn("VectorStore.remove")(function*(filter: Parameters<VectorStore.Service["remove"]>[0]) {
      const keys = yield* checkRemove(filter)
      if (filter.ids !== undefined && filter.ids.length === 0) {
        return 0
      }
      const ids = filter.ids === undefined ? sql`1 = 1` : sql.in("item_id", filter.ids)
      const removed = yield* sql`DELETE FROM ${table}
        WHERE ${live(filter.collection, filter.partition, keys, undefined)} AND ${ids}
        RETURNING item_id`.pipe(Effect.mapError(backendError("remove")))
      return removed.length
    })

    const purgeExpired = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      sql`DELETE FROM ${table} WHERE expires_at IS NOT NULL AND expires_at <= ${now} RETURNING item_id`.pipe(
        Effect.map((rows) =>
          rows.length
        ),
        Effect.mapError(backendError("purgeExpired")),
        Effect.withSpan("VectorStore.purgeExpired")
      ))

    return VectorStore.of({ mode, put, get, search, recent, remove, purgeExpired })
  })
