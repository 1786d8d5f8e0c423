/**
 * README "The request scope": a hook that holds a lease for the request's
 * lifetime and reports its release as an effect.
 */
import { Schedule } from "effect"
// #region readme
import { Effect } from "effect"
import { Hook, HookEffects, RequestScope } from "effect-agent-pipeline"

export const lease = Hook.make({
  name: "lease",
  beforePlanning: () =>
    Effect.gen(function*() {
      yield* HookEffects.report({ effectId: "lease-release", name: "Lease release", status: "pending" })
      yield* RequestScope.addFinalizer(() =>
        HookEffects.report({ effectId: "lease-release", name: "Lease release", status: "succeeded" }).pipe(
          Effect.ignore
        )
      )
      yield* RequestScope.fork(renewLeaseForever) // interrupted when the request ends
    }).pipe(Effect.ignore)
})
// #endregion readme

/** Stands in for a real lease renewal (a Redis PEXPIRE, a database heartbeat). */
const renewLeaseForever = Effect.void.pipe(Effect.repeat(Schedule.spaced("10 seconds")), Effect.asVoid)
