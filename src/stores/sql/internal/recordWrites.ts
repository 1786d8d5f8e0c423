/**
 * The execution store's hot writes — `create` at a request's start and the
 * one-statement `save` at its end — group-committed (issue 20): the writes
 * of many requests go to the database as one multi-row
 * `INSERT … ON CONFLICT (request_id) DO UPDATE … WHERE … RETURNING request_id`
 * per kind — in PostgreSQL both kinds in one statement (a data-modifying
 * CTE each), in SQLite one transaction when a batch has both — and each
 * caller gets its own row's answer back.
 *
 * Measured (`npm run bench`'s store table, 16 requests in flight, H=0, a
 * loaded 2-core machine): before, a request's two writes were four
 * statements and four commits — the `save` found the row `create` wrote (no
 * writer id) and fell to the read-modify-write: upsert (no-op), SELECT,
 * Schema decode, UPDATE. Now one statement each, batched: SQLite 0.34× →
 * 0.65–0.89× the memory store's recorded requests per second, PostgreSQL
 * 0.15× → 0.33–0.49× (0.48–0.50× with `asyncCommit`: there the WAL flush,
 * about 3.5 ms a commit, is what a batch waits for).
 *
 * A failure the database reports for the whole batch (locked, unreachable)
 * is every write's; any other one may be one row's, so each write of the
 * batch is tried again on its own, and each caller gets its own answer.
 *
 * Revision gating stays in the database (C15): the `WHERE` of the upsert is
 * the same condition the single-row statements had, evaluated per row, with
 * the row's own write time (`excluded.stored_at`) standing for "now".
 *
 * A request's create and its save in one batch are one row written
 * (`coalesce.ts`): with a request that does not wait for its create (a
 * generated id), that is every request ending within one batch — measured
 * (the peer bench's store script, 16 in flight, H=0, a loaded 2-core
 * machine, interleaved A/B): SQLite time in the driver 88 → 44 µs a request
 * (with `walCheckpointer.ts`), 0.75–0.88× → 0.86–0.97× the memory store.
 *
 * A statement cannot touch one row twice (PostgreSQL refuses it), so a batch
 * with several writes of one request id is split into rounds: the n-th write
 * of each id goes in round n, rounds in order.
 *
 * The SQL text of each statement shape (kind × rows) is built once and kept;
 * per call only the parameters are new — `@effect/sql` would otherwise walk
 * the template for every write.
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Exit, type Scope } from "effect"
import { ExecutionStoreError } from "../../contract/ExecutionStore.js"
import { errorDetail } from "../../internal/errorDetail.js"
import { coalesce } from "./coalesce.js"
import * as GroupCommit from "./groupCommit.js"
import type { ReadyWrite, RecordColumns, RowWrite } from "./rowWrite.js"

export type { DeferredColumns, RecordColumns, RowWrite } from "./rowWrite.js"

/** Most writes per batch (and rows per statement). */
export const defaultMaxBatch = 64

const columnNames =
  "request_id, revision, status, started_at, stored_at, expires_at, lease_expires_at, hook_names, writer_id, schema_version, body"
const columnCount = 11

const pushParams = (params: Array<unknown>, c: RecordColumns): void => {
  params.push(
    c.requestId,
    c.revision,
    c.status,
    c.startedAt,
    c.storedAt,
    c.expiresAt,
    c.lease,
    c.hookNames,
    c.writer,
    c.version,
    c.body
  )
}

/**
 * Whether a failure is the database's rather than one row's: locked,
 * unreachable, out of space, shutting down, or a statement the database
 * refuses whatever its rows. Then every write of the batch fails with it;
 * any other failure may be one row's, so each write is tried on its own.
 */
export const isDatabaseWide = (error: SqlError): boolean => {
  const cause: unknown = error.cause
  const code = typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string"
    ? cause.code
    : undefined
  // A failure without a database's code is the client's: the connection.
  if (code === undefined) return true
  if (code.startsWith("SQLITE_")) {
    return /^SQLITE_(BUSY|LOCKED|IOERR|FULL|READONLY|CANTOPEN|CORRUPT|NOTADB|NOMEM|PROTOCOL|PERM|AUTH)/.test(code)
  }
  // PostgreSQL's SQLSTATE classes of connection, resources, operator
  // intervention, system and internal errors, authorization, catalog.
  if (/^[0-9A-Z]{5}$/.test(code)) return /^(08|53|57|58|XX|28|3D|42)/.test(code)
  // A Node system error (ECONNRESET, …).
  return true
}

const isReady = (write: RowWrite): write is ReadyWrite => typeof write.columns.body === "string"

/**
 * The group commit of record writes over `sql` into `table`, its worker in
 * the current Scope.
 */
export const make = (
  sql: SqlClient,
  table: string,
  options: {
    readonly maxBatch?: number | undefined
    readonly asyncCommit?: boolean | undefined
  } = {}
): Effect.Effect<GroupCommit.GroupCommit<RowWrite, boolean, ExecutionStoreError>, never, Scope.Scope> => {
  const isPg = sql.onDialectOrElse({ pg: () => true, orElse: () => false })
  // The table's name as the dialect quotes it.
  const [quoted] = sql`${sql(table)}`.compile()
  const noHookRuns = isPg ? `${quoted}.hook_names = '[]'::jsonb` : `${quoted}.hook_names = '[]'`
  const conditions = {
    create: `${quoted}.expires_at <= excluded.stored_at`,
    save: `${quoted}.expires_at <= excluded.stored_at
      OR (${quoted}.revision < excluded.revision AND (${quoted}.writer_id = excluded.writer_id OR ${noHookRuns}))`
  } as const
  const upsert = `revision = excluded.revision, status = excluded.status, started_at = excluded.started_at,
    stored_at = CASE WHEN ${quoted}.expires_at <= excluded.stored_at THEN excluded.stored_at ELSE ${quoted}.stored_at END,
    expires_at = excluded.expires_at, lease_expires_at = excluded.lease_expires_at,
    hook_names = excluded.hook_names, writer_id = excluded.writer_id,
    schema_version = excluded.schema_version, body = excluded.body`

  /** `rows` rows of placeholders, the first parameter numbered `first` (PostgreSQL numbers them). */
  const valuesText = (rows: number, first: number): string => {
    const values: Array<string> = []
    for (let r = 0; r < rows; r++) {
      const ps: Array<string> = []
      for (let i = 0; i < columnCount; i++) {
        // hook_names is JSON (jsonb in PostgreSQL), the 8th column.
        ps.push(isPg ? `$${first + r * columnCount + i}${i === 7 ? "::jsonb" : ""}` : "?")
      }
      values.push(`(${ps.join(", ")})`)
    }
    return values.join(", ")
  }
  const upsertText = (kind: RowWrite["kind"], rows: number, first: number): string =>
    `INSERT INTO ${quoted} (${columnNames}) VALUES ${valuesText(rows, first)}
      ON CONFLICT (request_id) DO UPDATE SET ${upsert}
      WHERE ${conditions[kind]}
      RETURNING request_id`

  // The text of each statement shape, built once. PostgreSQL's shapes are
  // pairs (creates × saves), up to about 2,000 at 64 writes a batch: kept
  // to the usual few hundred.
  const texts = new Map<string, string>()
  const cached = (key: string, build: () => string): string => {
    const known = texts.get(key)
    if (known !== undefined) return known
    const text = build()
    if (texts.size >= 512) texts.clear()
    texts.set(key, text)
    return text
  }

  /** What one statement wrote, by kind. */
  interface Written {
    readonly create: ReadonlySet<string>
    readonly save: ReadonlySet<string>
  }
  const none: ReadonlySet<string> = new Set()

  /** A statement to run: its text, its parameters, and how its rows say what it wrote. */
  interface Planned {
    readonly text: string
    readonly params: ReadonlyArray<unknown>
    readonly written: (rows: ReadonlyArray<Record<string, unknown>>) => Written
  }

  const idsOf = (rows: ReadonlyArray<Record<string, unknown>>) => {
    const ids = new Set<string>()
    for (const row of rows) ids.add(String(row["request_id"]))
    return ids
  }

  /** The rows of one kind, distinct ids, in one statement. */
  const single = (kind: RowWrite["kind"], rows: ReadonlyArray<RecordColumns>): Planned => {
    const params: Array<unknown> = []
    for (const row of rows) pushParams(params, row)
    return {
      text: cached(`${kind}${rows.length}`, () => upsertText(kind, rows.length, 1)),
      params,
      written: (result) =>
        kind === "create" ? { create: idsOf(result), save: none } : { create: none, save: idsOf(result) }
    }
  }

  // PostgreSQL: the commit of this statement's own transaction does not
  // wait for the WAL flush (`set_config(…, true)` is local to it).
  const asyncCommit = isPg && options.asyncCommit === true
    ? `\n      UNION ALL SELECT 'o' AS kind, set_config('synchronous_commit', 'off', true) AS request_id`
    : ""

  /**
   * PostgreSQL: the creates and saves of one round (distinct ids) in one
   * statement — a data-modifying CTE per kind — so a batch of both is one
   * round trip and one commit.
   */
  const combined = (creates: ReadonlyArray<RecordColumns>, saves: ReadonlyArray<RecordColumns>): Planned => {
    const params: Array<unknown> = []
    for (const row of creates) pushParams(params, row)
    for (const row of saves) pushParams(params, row)
    const text = cached(`pg${creates.length}:${saves.length}`, () => {
      const ctes: Array<string> = []
      const selects: Array<string> = []
      if (creates.length > 0) {
        ctes.push(`c AS (${upsertText("create", creates.length, 1)})`)
        selects.push(`SELECT 'c' AS kind, request_id FROM c`)
      }
      if (saves.length > 0) {
        ctes.push(`s AS (${upsertText("save", saves.length, 1 + creates.length * columnCount)})`)
        selects.push(`SELECT 's' AS kind, request_id FROM s`)
      }
      return `WITH ${ctes.join(", ")}\n      ${selects.join(" UNION ALL ")}${asyncCommit}`
    })
    return {
      text,
      params,
      written: (rows) => {
        const create = new Set<string>()
        const save = new Set<string>()
        for (const row of rows) {
          if (row["kind"] === "c") create.add(String(row["request_id"]))
          else if (row["kind"] === "s") save.add(String(row["request_id"]))
        }
        return { create, save }
      }
    }
  }

  /** One round's statements (distinct ids). */
  const roundStatements = (
    creates: ReadonlyArray<RecordColumns>,
    saves: ReadonlyArray<RecordColumns>
  ): ReadonlyArray<Planned> => {
    if (isPg) return [combined(creates, saves)]
    if (creates.length === 0) return [single("save", saves)]
    if (saves.length === 0) return [single("create", creates)]
    return [single("create", creates), single("save", saves)]
  }

  /** Runs a batch's statements — in one transaction when there are several — and returns each one's rows. */
  const runStatements = (
    planned: ReadonlyArray<Planned>
  ): Effect.Effect<ReadonlyArray<ReadonlyArray<Record<string, unknown>>>, SqlError> => {
    const all = Effect.forEach(planned, (p) => sql.unsafe<Record<string, unknown>>(p.text, p.params))
    return planned.length === 1 ? all : sql.withTransaction(all)
  }

  const storeError = (write: RowWrite, error: SqlError) =>
    new ExecutionStoreError({ operation: write.kind, detail: errorDetail(error), cause: error })

  /** The write with its body encoded (a deferred one's), or the failure to encode it. */
  const ready = (write: RowWrite): ReadyWrite | ExecutionStoreError => {
    if (isReady(write)) return write
    const { body, ...columns } = write.columns
    try {
      return { kind: write.kind, columns: { ...columns, body: typeof body === "string" ? body : body() } }
    } catch (error) {
      return new ExecutionStoreError({ operation: "encode", detail: errorDetail(error), cause: error })
    }
  }

  /** Writes that are ready, each failure to encode answered on its own. */
  const writeReady = (
    writes: ReadonlyArray<RowWrite>
  ): Effect.Effect<ReadonlyArray<Exit.Exit<boolean, ExecutionStoreError>>> => {
    const prepared = writes.map(ready)
    const rows = prepared.filter((w): w is ReadyWrite => !(w instanceof ExecutionStoreError))
    if (rows.length === prepared.length) return writeRows(rows)
    return Effect.map(writeRows(rows), (exits) => {
      let next = 0
      return prepared.map((w) => (w instanceof ExecutionStoreError ? Exit.fail(w) : exits[next++]!))
    })
  }

  /** A batch: its superseded writes folded (`coalesce.ts`) — a folded create's body never encoded — then written. */
  const writeBatch = (
    writes: ReadonlyArray<RowWrite>
  ): Effect.Effect<ReadonlyArray<Exit.Exit<boolean, ExecutionStoreError>>> => {
    const folded = coalesce(writes)
    return Effect.flatMap(
      writeReady(folded.writes),
      (exits) => folded.answer(exits, (save) => Effect.map(writeReady([save]), (alone) => alone[0]!))
    )
  }

  const writeRows = (
    writes: ReadonlyArray<ReadyWrite>
  ): Effect.Effect<ReadonlyArray<Exit.Exit<boolean, ExecutionStoreError>>> => {
    // Rounds: the n-th write of each request id goes in round n.
    const rounds: Array<{ create: Array<RecordColumns>; save: Array<RecordColumns> }> = []
    const seen = new Map<string, number>()
    const roundOf: Array<number> = []
    for (const write of writes) {
      const id = write.columns.requestId
      const round = seen.get(id) ?? 0
      seen.set(id, round + 1)
      roundOf.push(round)
      const bucket = rounds[round] ??= { create: [], save: [] }
      bucket[write.kind].push(write.columns)
    }
    const planned: Array<Planned> = []
    const roundOfStatement: Array<number> = []
    rounds.forEach((bucket, round) => {
      for (const statement of roundStatements(bucket.create, bucket.save)) {
        planned.push(statement)
        roundOfStatement.push(round)
      }
    })
    return runStatements(planned).pipe(
      // One span per batch: how many writes shared how many statements.
      Effect.withSpan("ExecutionStore.writeBatch", {
        kind: "client",
        captureStackTrace: false,
        attributes: { "db.batch.writes": writes.length, "db.batch.statements": planned.length }
      }),
      Effect.map((results) => {
        const byRound: Array<{ create: Set<string>; save: Set<string> }> = rounds.map(() => ({
          create: new Set(),
          save: new Set()
        }))
        results.forEach((rows, i) => {
          const written = planned[i]!.written(rows)
          const into = byRound[roundOfStatement[i]!]!
          for (const id of written.create) into.create.add(id)
          for (const id of written.save) into.save.add(id)
        })
        return writes.map((write, i) => Exit.succeed(byRound[roundOf[i]!]![write.kind].has(write.columns.requestId)))
      }),
      Effect.catchAll((error) =>
        writes.length === 1 || isDatabaseWide(error)
          ? Effect.succeed(writes.map((write) => Exit.fail(storeError(write, error))))
          // Perhaps one row's failure: each write on its own, so each gets its own answer.
          : Effect.forEach(writes, (write) => Effect.map(writeRows([write]), (exits) => exits[0]!))
      )
    )
  }

  return GroupCommit.make<RowWrite, boolean, ExecutionStoreError>({
    maxBatch: options.maxBatch ?? defaultMaxBatch,
    write: writeBatch,
    closed: (write) => new ExecutionStoreError({ operation: write.kind, detail: "the store is closed" })
  })
}
