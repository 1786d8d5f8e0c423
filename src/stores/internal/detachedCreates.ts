/**
 * Stores that take a record's create with no fiber waiting for it, as this
 * library builds them (the SQL stores, whose writes are group-committed).
 * A request with a generated id does not wait for its create (issue 20):
 * the pipeline hands it to such a store directly instead of forking a fiber
 * to run and watch `create` — 5–7 µs a request — and the store encodes the
 * create's body only if its row is written as it is (a create and its save
 * in one batch are one row: `sql/internal/coalesce.ts`). A store someone
 * wraps is not one of these: it gets the forked `create`.
 */
import { Cause, Option } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"
import { ExecutionStoreError } from "../contract/ExecutionStore.js"

/**
 * Submits `record`'s create, stored at `now`, and returns at once;
 * `onFailure` is called once if it fails (not when a live record has the
 * id: a generated id names none). It must not throw.
 */
export type DetachedCreate = (
  record: ExecutionRecord,
  now: number,
  onFailure: (error: ExecutionStoreError) => void
) => void

const known = new WeakMap<object, DetachedCreate>()

/** Gives `store` its detached create; returns the store. */
export const withDetachedCreate = <S extends object>(store: S, create: DetachedCreate): S => {
  known.set(store, create)
  return store
}

/** The detached create of `store`, when it has one. */
export const detachedCreateOf = (store: object): DetachedCreate | undefined => known.get(store)

/** A failed create's error, for `onFailure`: its own, or a defect described. */
export const createFailure = (cause: Cause.Cause<ExecutionStoreError>): ExecutionStoreError =>
  Option.getOrElse(
    Cause.failureOption(cause),
    () => new ExecutionStoreError({ operation: "create", detail: Cause.pretty(cause) })
  )
