/**
 * One record write of the group commit (`recordWrites.ts`), and the
 * columns it writes.
 */
/**
 * The columns of one stored record, in the table's column order (see
 * `columnNames` in `recordWrites.ts`); `hookNames` is the JSON text of its hook names.
 */
export interface RecordColumns {
  readonly requestId: string
  readonly revision: number
  readonly status: string
  readonly startedAt: number
  readonly storedAt: number
  readonly expiresAt: number
  readonly lease: number | null
  readonly hookNames: string
  readonly writer: string | null
  readonly version: number
  readonly body: string
}

/**
 * The columns of a write whose body is encoded only if its row is written
 * as it is: a request's detached create, which its save usually supersedes
 * in the same batch (`coalesce.ts`), never needs one then.
 */
export interface DeferredColumns extends Omit<RecordColumns, "body"> {
  /** Encodes the body's text; may throw (the write then fails on its own). */
  readonly body: () => string
}

/**
 * One write: `create` inserts the row unless a live one has its id (an
 * expired one is replaced); `save` also replaces an older revision when no
 * merge is needed — the stored row is exactly this writer's snapshot, or
 * has no hook runs to merge with. Its answer: whether the row was written.
 */
export interface RowWrite {
  readonly kind: "create" | "save"
  readonly columns: RecordColumns | DeferredColumns
}

/** A write whose columns are all known. */
export interface ReadyWrite extends RowWrite {
  readonly columns: RecordColumns
}
