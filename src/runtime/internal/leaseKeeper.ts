/**
 * Owner leases and progress writes of running records (DESIGN §7 "durable
 * from the first moment"). While a request runs, its record says which
 * process owns it and until when (`lifecycle.owner`,
 * `lifecycle.leaseExpiresAt`). One keeper per pipeline, on the `Clock`:
 *
 * - every {@link writeEveryMillis} (or a third of the lease, if shorter) it
 *   writes the snapshot of each running request that changed since its last
 *   write — plans, step results, steps in flight — so a running record is
 *   never more than that behind (bounded write frequency: at most one
 *   progress write per request per period);
 * - every third of the lease it renews all its running requests' leases
 *   (a write each).
 *
 * A process that dies stops renewing; once its leases run out, a store sweep
 * marks those records `abandoned`. A request holds its lease from `begin`
 * until its record is finalized; the keeper's fiber lives in the pipeline's
 * Scope.
 */
import { Clock, Duration, Effect, Fiber, Runtime, type Scope } from "effect"
import { parkOnce } from "../../domain/internal/liveShapes.js"
import type { RequestRecorder } from "./requestRecorder.js"

/**
 * The longest a running record's changes wait for their write.
 *
 * @since 0.1.0
 * @category constants
 */
export const writeEveryMillis = 500

/**
 * The keeper of one pipeline's leases.
 *
 * @since 0.1.0
 * @category models
 */
export interface LeaseKeeper {
  /** This pipeline's owner id: `<pid>:<random>`, unique per pipeline build. */
  readonly owner: string
  /** How long a lease holds from its last renewal. */
  readonly leaseMillis: number
  /** Keeps `recorder`'s record written and its lease renewed until released; returns the release. */
  readonly hold: (recorder: RequestRecorder) => () => void
  /** How many leases are held now. */
  readonly held: () => number
}

/**
 * A keeper for leases of `leaseMillis`, its fiber forked into the current Scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (leaseMillis: number): Effect.Effect<LeaseKeeper, never, Scope.Scope> =>
  Effect.gen(function*() {
    // Optimized request-path code survives idle-time full collections (liveShapes.ts).
    parkOnce()
    const held = new Set<RequestRecorder>()
    const pid = typeof process === "object" && typeof process.pid === "number" ? process.pid : 0
    const owner = `${pid}:${globalThis.crypto.randomUUID().slice(0, 8)}`
    const renewEvery = Math.max(1, Math.floor(leaseMillis / 3))
    const tick = Duration.millis(Math.min(writeEveryMillis, renewEvery))
    let renewAt = (yield* Clock.currentTimeMillis) + renewEvery
    const pass = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      if (held.size === 0) return Effect.void
      const recorders = [...held]
      // All at once: a store that commits writes in groups (the SQL stores)
      // makes one commit of a tick's writes, not one per running request.
      if (now < renewAt) {
        return Effect.forEach(recorders, (r) => r.flushIfChanged, { concurrency: "unbounded", discard: true })
      }
      renewAt = now + renewEvery
      return Effect.forEach(recorders, (r) => r.renew(now + leaseMillis), { concurrency: "unbounded", discard: true })
    })
    // The keeper's fiber runs only while a request holds a lease: an idle
    // pipeline has no timer pending (nothing keeps a process alive), and a
    // busy one pays no fork per request.
    const runtime = yield* Effect.runtime<never>()
    let fiber: Fiber.RuntimeFiber<void> | undefined
    let closed = false
    const loop: Effect.Effect<void> = Effect.gen(function*() {
      while (held.size > 0) {
        yield* Effect.sleep(tick)
        yield* pass
      }
    }).pipe(
      Effect.interruptible,
      Effect.ensuring(Effect.sync(() => {
        fiber = undefined
        // A lease taken while the loop was ending.
        if (held.size > 0) start()
      }))
    )
    const start = (): void => {
      if (fiber !== undefined || closed) return
      const now = Runtime.runSync(runtime, Clock.currentTimeMillis)
      if (renewAt < now) renewAt = now + renewEvery
      fiber = Runtime.runFork(runtime, loop)
    }
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closed = true
        return fiber === undefined ? Effect.void : Fiber.interrupt(fiber)
      })
    )
    return {
      owner,
      leaseMillis,
      hold: (recorder) => {
        held.add(recorder)
        start()
        return () => void held.delete(recorder)
      },
      held: () => held.size
    }
  })
