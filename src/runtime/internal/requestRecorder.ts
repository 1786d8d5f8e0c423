/**
 * The request-local recorder: holds the newest full snapshot of one
 * request's execution record, bumps `record_revision` on every change, and
 * writes snapshots to the `ExecutionStore`.
 *
 * During the request, changes stay in memory; the snapshot is written when
 * the request ends (success, failure, interruption, suspension) and again for
 * every later change (late effect updates merge into the newest snapshot).
 * Store failures are logged, never surfaced: evidence must not change the
 * business outcome. A recording recorder is registered for `Progress` to
 * follow live (`progressRegistry.ts`) until it is finalized; it notifies
 * only when someone listens.
 */
import { Cause, Effect } from "effect"
import type { ExecutionRecord, HookInvocation, Lifecycle } from "../../domain/ExecutionRecord.js"
import { keepLatest } from "../../domain/internal/liveShapes.js"
import { mergeStoredEvidence, withRun } from "../../domain/internal/recordMerge.js"
import { fitRecord, measure, stamp } from "../../domain/internal/recordSize.js"
import { flatText } from "./flatText.js"
import { Invocation, type InvocationHandle, type InvocationLog, noopHandle } from "./invocationSlot.js"
import { type LiveRecord, notify, register, unregister, without } from "./progressRegistry.js"

/**
 * Writes a snapshot (an `ExecutionStore`'s `save`). Its failures are logged, never surfaced.
 *
 * @since 0.1.0
 * @category models
 */
export type Save = (record: ExecutionRecord) => Effect.Effect<unknown, unknown>

/**
 * Applies a change to the newest stored record (an `ExecutionStore`'s `update`): how a finished
 * request's late hook-run changes reach the newest snapshot, even one another process wrote.
 *
 * @since 0.1.0
 * @category models
 */
export type Update = (
  requestId: string,
  f: (record: ExecutionRecord) => ExecutionRecord | undefined,
  about?: WriteAbout
) => Effect.Effect<unknown, unknown>

/**
 * What a write carries, for observers of `record_write`: the snapshot's revision and
 * lifecycle status, or `-1` / `merge` for one hook run's late change merged into the newest stored record.
 *
 * @since 0.1.0
 * @category models
 */
export interface WriteAbout {
  readonly revision: number
  readonly status: string
}

/**
 * How a recorder writes: full snapshots, and — once the request has ended — late changes of single hook runs.
 *
 * @since 0.1.0
 * @category models
 */
export interface Writer {
  readonly save: Save
  readonly update?: Update | undefined
}

/**
 * The recorder.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestRecorder {
  readonly enabled: boolean
  /** The newest snapshot. */
  readonly current: () => ExecutionRecord
  /** Applies a change (revision + 1); written at once after the request ended. */
  readonly modify: (f: (record: ExecutionRecord) => ExecutionRecord) => Effect.Effect<void>
  /** {@link modify}, applied now (from inside a running effect); returns what is left: its write once ended. */
  readonly modifyNow: (f: (record: ExecutionRecord) => ExecutionRecord) => Effect.Effect<void>
  readonly startInvocation: () => InvocationHandle
  /**
   * Records a finished run that reported no effects, now (call it only from
   * inside a running effect); returns what is left to do, as
   * `InvocationHandle.completeNow` does. The synchronous fast path's record.
   */
  readonly appendNow: (invocation: HookInvocation) => Effect.Effect<void>
  /** Sets the lifecycle and writes the snapshot; later changes are written as they happen. */
  readonly finalize: (lifecycle: Lifecycle) => Effect.Effect<void>
  /** Writes the newest snapshot now (used at suspension). */
  readonly flush: Effect.Effect<void>
  /** Extends a running record's lease to `leaseExpiresAt` and writes it (a new revision); nothing once finalized. */
  readonly renew: (leaseExpiresAt: number) => Effect.Effect<void>
  /** Writes the newest snapshot if it changed since the last write (before finalize only). */
  readonly flushIfChanged: Effect.Effect<void>
}

/**
 * The largest record a recorder writes by default (16 MiB of JSON text).
 * @since 0.1.0
 * @category constants
 */
export const defaultMaxRecordBytes = 16 * 1_048_576

/**
 * A recorder that writes with `save`, starting from `initial`. A snapshot
 * over `maxBytes` of JSON text (default {@link defaultMaxRecordBytes}) is
 * cut down before it is written — its bulkiest fields, largest first — and
 * says so in its `diagnostics`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  writer: Save | Writer,
  initial: ExecutionRecord,
  options?: { readonly maxBytes?: number | undefined }
): RequestRecorder => {
  const maxBytes = options?.maxBytes ?? defaultMaxRecordBytes
  return typeof writer === "function"
    ? new Recorder(writer, undefined, initial, maxBytes)
    : new Recorder(writer.save, writer.update, initial, maxBytes)
}

/** The recording recorder: one object per request, its steps methods. */
class Recorder implements RequestRecorder, InvocationLog, LiveRecord {
  readonly enabled = true
  // This recorder's identity in the records it writes (see `persistNow`).
  private readonly writerId = flatText(globalThis.crypto.randomUUID())
  private seq = 0
  private runs = 0
  // Invocations are appended to a private array (O(1) per hook); a full
  // immutable snapshot is built only when someone reads or writes it.
  // Elements are replaced, never mutated, so earlier snapshots stay intact.
  private base: ExecutionRecord
  readonly invocations: Array<HookInvocation>
  private revision: number
  private snapshot: ExecutionRecord | undefined
  private finalized = false
  // The revision of the last snapshot handed to the store.
  private written = -1
  // Who follows this request live (`Progress`); undefined while nobody does.
  private listeners: ReadonlyArray<() => void> | undefined = undefined
  private readonly persist: Effect.Effect<void>
  readonly flush: Effect.Effect<void>
  readonly flushIfChanged: Effect.Effect<void>

  constructor(
    private readonly save: Save,
    private readonly update: Update | undefined,
    private readonly initial: ExecutionRecord,
    private readonly maxBytes: number
  ) {
    this.base = initial
    this.invocations = [...initial.hookInvocations]
    this.revision = initial.recordRevision
    this.snapshot = initial
    this.persist = Effect.suspend(() => this.persistNow())
    this.flush = this.persist
    this.flushIfChanged = Effect.suspend(
      () => (this.finalized || this.revision === this.written ? Effect.void : this.persist)
    )
    register(initial.requestId, this)
  }

  listen(listener: () => void): () => void {
    this.listeners = [...(this.listeners ?? []), listener]
    return () => void (this.listeners = without(this.listeners, listener))
  }

  current(): ExecutionRecord {
    if (this.snapshot === undefined) {
      this.snapshot = { ...this.base, hookInvocations: this.invocations.slice(), recordRevision: this.revision }
    }
    return this.snapshot
  }

  private logged<A, E>(write: Effect.Effect<A, E>): Effect.Effect<void> {
    return write.pipe(
      // Even a store that dies must not change the request's outcome; only
      // interruption propagates.
      Effect.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Effect.interrupt
          : Effect.logWarning("execution record not written", Cause.pretty(cause)).pipe(
            Effect.annotateLogs({ requestId: this.initial.requestId })
          )
      ),
      Effect.asVoid
    )
  }

  /**
   * Writes the newest snapshot. With `update`, as a read-modify-write of the
   * stored record: refused only when this recorder's own later write is
   * already there; a record another writer changed meanwhile (a late effect
   * of the suspended part of a resumed request) is merged into, never
   * overwritten — its hook runs keep what they have further along — and the
   * store numbers the revision. Without `update`, a revision-gated save.
   */
  private persistNow(): Effect.Effect<void> {
    const record = this.fitted()
    this.written = record.recordRevision
    const update = this.update
    if (update === undefined) return this.logged(this.save(record))
    const mine = ++this.seq
    const writerId = this.writerId
    // Measured once (by the fit above): a store capped by bytes reads the size.
    const stamped = stamp(record, measure(record), { id: writerId, seq: mine })
    const about = { revision: record.recordRevision, status: record.lifecycle?.status ?? "unknown" }
    return this.logged(Effect.flatMap(
      // Usually one conditional write; refused ("stale") when the stored
      // record is not older — this recorder's own later write, or another
      // writer's: then merged into, unless it is this recorder's own.
      this.save(stamped),
      (saved) =>
        saved !== "stale" ? Effect.void : update(
          this.initial.requestId,
          (stored) =>
            stored.writer?.id === writerId && stored.writer.seq >= mine
              ? undefined
              : mergeStoredEvidence(stored, stamped),
          about
        )
    ))
  }

  /**
   * The newest snapshot, within the size limit: one over it is cut down
   * (and kept cut: its bulk is not held in memory either).
   */
  private fitted(): ExecutionRecord {
    const record = this.current()
    const fitted = fitRecord(record, this.maxBytes)
    if (fitted === record) return record
    this.base = { ...fitted, hookInvocations: this.invocations }
    this.snapshot = fitted
    return fitted
  }

  /** A finished request's late change of one hook run, merged into the newest stored record. */
  private persistRun(slot: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      const run = this.invocations[slot]
      const update = this.update
      if (update === undefined || run === undefined) return this.persist
      return this.logged(Effect.flatMap(
        update(this.initial.requestId, (stored) => withRun(stored, run), { revision: -1, status: "merge" }),
        // No stored record to merge into (its writes failed, or it expired): write the snapshot whole.
        (result) => (result === "missing" ? this.persist : Effect.void)
      ))
    })
  }

  // Every change is a synchronous read-modify-write: concurrent fibers cannot
  // interleave inside it, so no change is lost and the revision only grows.
  changed(slot?: number): Effect.Effect<void> {
    this.revision++
    this.snapshot = undefined
    if (this.listeners !== undefined) notify(this.listeners)
    if (!this.finalized) return Effect.void
    return slot === undefined ? this.persist : this.persistRun(slot)
  }

  modifyNow(f: (r: ExecutionRecord) => ExecutionRecord): Effect.Effect<void> {
    // `f` sees the invocations recorded so far without a copy of them (the
    // base record holds the live array; its `recordRevision` is not kept
    // current — the snapshot sets it); a change that keeps them (the usual
    // case) costs no copy either, and no snapshot is built for it.
    const { base, invocations } = this
    const next = f(base.hookInvocations === invocations ? base : { ...base, hookInvocations: invocations })
    if (next.hookInvocations !== invocations) {
      const replaced = next.hookInvocations.slice()
      invocations.length = 0
      invocations.push(...replaced)
      this.base = { ...next, hookInvocations: invocations }
    } else {
      this.base = next
    }
    return this.changed()
  }

  modify(f: (r: ExecutionRecord) => ExecutionRecord): Effect.Effect<void> {
    return Effect.suspend(this.modifyNow.bind(this, f))
  }

  appendNow(invocation: HookInvocation): Effect.Effect<void> {
    this.invocations.push(invocation)
    return this.changed()
  }

  startInvocation(): InvocationHandle {
    return new Invocation(this)
  }

  nextRunId(): string {
    return `${this.writerId}/${++this.runs}`
  }

  finalize(lifecycle: Lifecycle): Effect.Effect<void> {
    return Effect.withFiberRuntime((fiber) => {
      // The newest finished request's recorder (its record) and fiber stay
      // alive: optimized code that embeds their shapes survives idle-time
      // full collections (liveShapes.ts).
      keepLatest("recorder", this)
      keepLatest("fiber", fiber)
      return this.finalizeNow(lifecycle)
    })
  }

  private finalizeNow(lifecycle: Lifecycle): Effect.Effect<void> {
    this.base = { ...this.current(), lifecycle }
    this.revision++
    this.snapshot = undefined
    this.finalized = true
    if (this.listeners !== undefined) notify(this.listeners)
    unregister(this.initial.requestId, this)
    return this.persist
  }

  renew(leaseExpiresAt: number): Effect.Effect<void> {
    return Effect.suspend(() => {
      const lifecycle = this.base.lifecycle
      if (this.finalized || lifecycle === undefined || lifecycle.status !== "running") return Effect.void
      this.base = { ...this.current(), lifecycle: { ...lifecycle, leaseExpiresAt } }
      this.revision++
      this.snapshot = undefined
      return this.persist
    })
  }
}

/**
 * A recorder for recording off: keeps the initial snapshot, writes nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const disabled = (initial: ExecutionRecord): RequestRecorder => ({
  enabled: false,
  current: () => initial,
  modify: () => Effect.void,
  modifyNow: () => Effect.void,
  appendNow: () => Effect.void,
  startInvocation: () => noopHandle,
  finalize: () => Effect.void,
  flush: Effect.void,
  renew: () => Effect.void,
  flushIfChanged: Effect.void
})
