/**
 * The server's draining signal. When the server's Scope closes it first
 * completes `draining` — open SSE streams see it and end with a terminal
 * event — then waits up to the drain timeout for the streams to finish
 * before the HTTP server interrupts what is left.
 */
import { Deferred, Effect } from "effect"

/**
 * The signal: `draining` completes once the server starts shutting down
 * (and stays completed); `begin` completes it; `isDraining` polls it.
 */
export interface ShutdownSignal {
  /** Completes when the server starts draining; never fails. */
  readonly draining: Effect.Effect<void>
  /** Starts draining (idempotent). */
  readonly begin: Effect.Effect<void>
  /** Whether draining has started. */
  readonly isDraining: Effect.Effect<boolean>
}

/**
 * A fresh signal, not yet draining.
 */
export const make: Effect.Effect<ShutdownSignal> = Effect.map(Deferred.make<void>(), (deferred) => ({
  draining: Deferred.await(deferred),
  begin: Effect.asVoid(Deferred.succeed(deferred, undefined)),
  isDraining: Deferred.isDone(deferred)
}))

/**
 * A signal that never fires: for streams served outside a server (tests).
 */
export const never: ShutdownSignal = {
  draining: Effect.never,
  begin: Effect.void,
  isDraining: Effect.succeed(false)
}
