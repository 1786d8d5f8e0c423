/**
 * Owner leases of running records (DESIGN §7 "durable from the first
 * moment"). While a request runs, its record says which process owns it and
 * until when (`lifecycle.owner`, `lifecycle.leaseExpiresAt`). One keeper per
 * pipeline renews the leases of all its running requests on the `Clock`,
 * writing each one's newest snapshot — so a running record is also never
 * more than one renewal period behind. A process that dies stops renewing;
 * once its leases run out, a store sweep marks those records `abandoned`.
 *
 * A request holds its lease from `begin` until its record is finalized; the
 * keeper's fiber lives in the pipeline's Scope.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Schedule, type Scope } from "effect"
import type { RequestRecorder } from "./RequestRecorder.js"

/**
 * The keeper of one pipeline's leases.
 *
 * @since 0.1.0
 */
export interface LeaseKeeper {
  /** This pipeline's owner id: `<pid>:<random>`, unique per pipeline build. */
  readonly owner: string
  /** How long a lease holds from its last renewal. */
  readonly leaseMillis: number
  /** Renews `recorder`'s lease until released; returns the release. */
  readonly hold: (recorder: RequestRecorder) => () => void
  /** How many leases are held now. */
  readonly held: () => number
}

/**
 * A keeper renewing every third of `leaseMillis`, forked into the current Scope.
 *
 * @since 0.1.0
 */
export const make = (leaseMillis: number): Effect.Effect<LeaseKeeper, never, Scope.Scope> =>
  Effect.gen(function*() {
    const held = new Set<RequestRecorder>()
    const pid = typeof process === "object" && typeof process.pid === "number" ? process.pid : 0
    const owner = `${pid}:${globalThis.crypto.randomUUID().slice(0, 8)}`
    const renewAll = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.forEach([...held], (recorder) => recorder.renew(now + leaseMillis), { discard: true }))
    yield* renewAll.pipe(
      Effect.schedule(Schedule.spaced(Duration.millis(Math.max(1, Math.floor(leaseMillis / 3))))),
      Effect.interruptible,
      Effect.forkScoped
    )
    return {
      owner,
      leaseMillis,
      hold: (recorder) => {
        held.add(recorder)
        return () => void held.delete(recorder)
      },
      held: () => held.size
    }
  })
