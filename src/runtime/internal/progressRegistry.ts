/**
 * The requests recording in this process, by request id (issue 23): where
 * `Progress` finds a running request's recorder to follow it live. A
 * recorder registers when it is made and leaves when it is finalized; a
 * follower listens to its changes. Nothing here costs a recorder anything
 * per change while nobody listens (one field check), and a registration is
 * one map write per request.
 *
 * Process-wide on purpose: recorders are made deep inside pipelines, with
 * no service in reach, and a follower (a server route) may be built from
 * another Layer than the pipeline it follows.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import type { ExecutionRecord } from "../../domain/ExecutionRecord.js"

/**
 * A request's recorder as a follower sees it.
 *
 * @since 0.1.0
 * @category models
 */
export interface LiveRecord {
  /** The newest snapshot. */
  readonly current: () => ExecutionRecord
  /** Calls `listener` after every change (synchronously: it must only take note); returns its removal. */
  readonly listen: (listener: () => void) => () => void
}

const live = new Map<string, LiveRecord>()
const waiting = new Map<string, Set<() => void>>()

/**
 * Registers `record` as `requestId`'s live record (the newest registration
 * of an id wins) and wakes whoever waits for it.
 *
 * @since 0.1.0
 * @category registry
 */
export const register = (requestId: string, record: LiveRecord): void => {
  live.set(requestId, record)
  if (waiting.size === 0) return
  const wake = waiting.get(requestId)
  if (wake === undefined) return
  waiting.delete(requestId)
  for (const f of wake) f()
}

/**
 * Removes `record`'s registration (not a newer one of the same id).
 *
 * @since 0.1.0
 * @category registry
 */
export const unregister = (requestId: string, record: LiveRecord): void => {
  if (live.get(requestId) === record) live.delete(requestId)
}

/**
 * `requestId`'s live record, if that request is recording in this process.
 *
 * @since 0.1.0
 * @category registry
 */
export const lookup = (requestId: string): LiveRecord | undefined => live.get(requestId)

/**
 * How many requests are registered (for tests: none is left behind).
 *
 * @since 0.1.0
 * @category registry
 */
export const size = (): number => live.size

/**
 * Completes when a record registers for `requestId` (at once if one is).
 *
 * @since 0.1.0
 * @category registry
 */
export const registered = (requestId: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (live.has(requestId)) return resume(Effect.void)
    const wake = () => resume(Effect.void)
    const set = waiting.get(requestId) ?? new Set()
    set.add(wake)
    waiting.set(requestId, set)
    return Effect.sync(() => {
      set.delete(wake)
      if (set.size === 0 && waiting.get(requestId) === set) waiting.delete(requestId)
    })
  })

/**
 * Calls every listener of a change.
 *
 * @since 0.1.0
 * @category registry
 */
export const notify = (listeners: ReadonlyArray<() => void>): void => {
  for (const f of listeners) f()
}

/**
 * `listeners` without `listener` (`undefined` when none is left: nobody listens).
 *
 * @since 0.1.0
 * @category registry
 */
export const without = (
  listeners: ReadonlyArray<() => void> | undefined,
  listener: () => void
): ReadonlyArray<() => void> | undefined => {
  const rest = listeners?.filter((f) => f !== listener)
  return rest === undefined || rest.length === 0 ? undefined : rest
}
