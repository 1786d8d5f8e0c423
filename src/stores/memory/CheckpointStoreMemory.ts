/**
 * The in-memory CheckpointStore: one process's HITL checkpoints, the
 * agent's default. Reached as `CheckpointStore.layerMemory` /
 * `CheckpointStore.makeMemory`; it runs the same conformance suite as the
 * SQL backends.
 *
 * @since 0.1.0
 */
import { Clock, Duration, Effect, Layer, Option } from "effect"
import type { Checkpoint } from "../../domain/Checkpoint.js"
import { CheckpointStore, type Claim, ClaimResult } from "../contract/CheckpointStore.js"

interface Entry {
  readonly checkpoint: Checkpoint
  readonly claim: Claim | undefined
}

/**
 * Builds an in-memory checkpoint store. Every check and its write happen in
 * one synchronous block, so concurrent claims are serialized: exactly one
 * wins.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * const program = Effect.gen(function*() {
 *   const store = yield* CheckpointStore.makeMemory
 *   return yield* store.claim("unknown", { owner: "me", leaseFor: "1 minute" }) // NotFound
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: Effect.Effect<CheckpointStore.Service> = Effect.sync(() => {
  const entries = new Map<string, Entry>()
  const heldBy = (entry: Entry | undefined, owner: string): entry is Entry => entry?.claim?.owner === owner
  return CheckpointStore.of({
    save: (checkpoint) =>
      Effect.sync(() => void entries.set(checkpoint.checkpointId, { checkpoint, claim: undefined })),
    get: (checkpointId) =>
      Effect.sync(() => Option.map(Option.fromNullable(entries.get(checkpointId)), (e) => e.checkpoint)),
    claim: (checkpointId, { leaseFor, owner }) =>
      Effect.map(Clock.currentTimeMillis, (now): ClaimResult => {
        const entry = entries.get(checkpointId)
        if (entry === undefined) return ClaimResult.NotFound()
        if (entry.claim !== undefined && now < entry.claim.expiresAt) {
          return ClaimResult.AlreadyClaimed({ owner: entry.claim.owner, expiresAt: entry.claim.expiresAt })
        }
        const claim: Claim = { owner, expiresAt: now + Duration.toMillis(leaseFor) }
        entries.set(checkpointId, { checkpoint: entry.checkpoint, claim })
        return ClaimResult.Claimed({ checkpoint: entry.checkpoint, claim })
      }),
    complete: (checkpointId, owner) =>
      Effect.sync(() => heldBy(entries.get(checkpointId), owner) && entries.delete(checkpointId)),
    release: (checkpointId, owner) =>
      Effect.sync(() => {
        const entry = entries.get(checkpointId)
        if (!heldBy(entry, owner)) return false
        entries.set(checkpointId, { checkpoint: entry.checkpoint, claim: undefined })
        return true
      })
  })
})

/**
 * The in-memory store as a Layer (the agent's default checkpoint store).
 *
 * @example
 * ```ts
 * import { Agent, CheckpointStore } from "effect-agent-pipeline"
 *
 * const AgentLive = Agent.layerOffline({ tools: [], checkpointStore: CheckpointStore.layerMemory })
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<CheckpointStore> = Layer.effect(CheckpointStore, makeMemory)
