/**
 * Where HITL checkpoints wait for a decision. A resume does not take a
 * checkpoint, it *claims* it under a lease: while the claim holds, no other
 * resume gets it; the resume that holds it `complete`s it when it succeeds
 * (the checkpoint is deleted) or `release`s it when it fails, so the
 * checkpoint can be resumed again. A claim whose lease ran out — its owner
 * died, or overran — can be claimed by someone else, and from then on the
 * old owner can neither complete nor release it.
 *
 * A stored checkpoint that does not decode (its row was rewritten, or is
 * corrupt) is never handed out, and never stays claimed: `get` and `claim`
 * fail with {@link CheckpointDecodeError} (a claim is released first), which
 * a resume reports as `tampered`. The row stays, for forensics.
 *
 * Time comes from the `Clock`. Backends: {@link layerMemory} here; every
 * backend runs the same conformance suite.
 *
 * @since 0.1.0
 */
import { Clock, Context, Data, Duration, Effect, Layer, Option, Schema } from "effect"
import type { Checkpoint } from "../domain/Checkpoint.js"
import { id, TypeId } from "../domain/ErrorId.js"
import type { ExecutionStoreError } from "./ExecutionStore.js"

/**
 * A stored checkpoint that does not decode: its body is not JSON or not a
 * checkpoint (rewritten by hand, corrupt, or written by another version).
 * `requestId` is the request the store filed it under, when it knows. The
 * store never hands it out and never leaves it claimed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * const peek = (checkpointId: string) =>
 *   Effect.flatMap(CheckpointStore.CheckpointStore, (store) => store.get(checkpointId)).pipe(
 *     Effect.catchTag("CheckpointDecodeError", (e) => Effect.succeed(`unusable: ${e.detail}`))
 *   )
 * ```
 *
 * @since 0.1.0
 */
export class CheckpointDecodeError extends Schema.TaggedError<CheckpointDecodeError>(id("CheckpointDecodeError"))(
  "CheckpointDecodeError",
  {
    checkpointId: Schema.String,
    requestId: Schema.optional(Schema.String),
    detail: Schema.String
  }
) {
  /** @since 0.1.0 */
  readonly [TypeId]: TypeId = TypeId

  override get message(): string {
    return `stored checkpoint ${this.checkpointId} does not decode: ${this.detail}`
  }
}

/**
 * A held claim: who holds it and until when its lease runs (epoch
 * milliseconds, from the `Clock`). The lease holds while `now < expiresAt`.
 *
 * @example
 * ```ts
 * import type { CheckpointStore } from "effect-agent-pipeline"
 *
 * const holds = (claim: CheckpointStore.Claim, now: number) => now < claim.expiresAt
 * ```
 *
 * @since 0.1.0
 */
export interface Claim {
  readonly owner: string
  readonly expiresAt: number
}

/**
 * What a claim asks for: who claims (a name unique to this claimant: the
 * pipeline uses its own id and the resume's number), and for how long.
 *
 * @example
 * ```ts
 * import { Duration } from "effect"
 * import type { CheckpointStore } from "effect-agent-pipeline"
 *
 * const options: CheckpointStore.ClaimOptions = { owner: "worker-1/42", leaseFor: Duration.minutes(5) }
 * ```
 *
 * @since 0.1.0
 */
export interface ClaimOptions {
  readonly owner: string
  readonly leaseFor: Duration.DurationInput
}

/**
 * What `claim` found: the checkpoint, now claimed by the caller; no such
 * checkpoint (unknown, or already completed); or someone else's live claim
 * (its owner, and when its lease runs out).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * const describe = (result: CheckpointStore.ClaimResult) =>
 *   CheckpointStore.ClaimResult.$match(result, {
 *     Claimed: ({ checkpoint, claim }) => `${checkpoint.checkpointId} is ours until ${claim.expiresAt}`,
 *     NotFound: () => "no such checkpoint",
 *     AlreadyClaimed: ({ expiresAt, owner }) => `${owner} holds it until ${expiresAt}`
 *   })
 * ```
 *
 * @since 0.1.0
 */
export type ClaimResult = Data.TaggedEnum<{
  Claimed: { readonly checkpoint: Checkpoint; readonly claim: Claim }
  NotFound: {}
  AlreadyClaimed: { readonly owner: string; readonly expiresAt: number }
}>

/**
 * Constructors and matchers of {@link ClaimResult}.
 *
 * @since 0.1.0
 */
export const ClaimResult = Data.taggedEnum<ClaimResult>()

/**
 * The checkpoint store service.
 *
 * @example
 * ```ts
 * import { Duration, Effect } from "effect"
 * import { CheckpointStore } from "effect-agent-pipeline"
 *
 * // Resume once: claim, do the work, then complete (or release on failure).
 * const resumeOnce = (checkpointId: string, work: Effect.Effect<void>) =>
 *   Effect.gen(function*() {
 *     const store = yield* CheckpointStore.CheckpointStore
 *     const owner = "worker-1"
 *     const claimed = yield* store.claim(checkpointId, { owner, leaseFor: Duration.minutes(5) })
 *     if (claimed._tag !== "Claimed") return claimed._tag
 *     yield* work.pipe(
 *       Effect.onExit((exit) =>
 *         Effect.orDie(exit._tag === "Success" ? store.complete(checkpointId, owner) : store.release(checkpointId, owner))
 *       )
 *     )
 *     return "done"
 *   })
 * ```
 *
 * @since 0.1.0
 */
export class CheckpointStore extends Context.Tag("effect-agent-pipeline/CheckpointStore")<
  CheckpointStore,
  CheckpointStore.Service
>() {}

/** @since 0.1.0 */
export declare namespace CheckpointStore {
  /** @since 0.1.0 */
  export interface Service {
    /** Stores a checkpoint, unclaimed (replacing one with the same id, and any claim on it). */
    readonly save: (checkpoint: Checkpoint) => Effect.Effect<void, ExecutionStoreError>
    /**
     * The checkpoint, claimed or not, until it is completed.
     * `CheckpointDecodeError` when the stored one does not decode.
     */
    readonly get: (
      checkpointId: string
    ) => Effect.Effect<Option.Option<Checkpoint>, ExecutionStoreError | CheckpointDecodeError>
    /**
     * Claims the checkpoint for `owner` until `now + leaseFor`, atomically:
     * `AlreadyClaimed` while another claim's lease holds (whoever asks, its
     * own owner included), `NotFound` when there is no such checkpoint.
     * A stored checkpoint that does not decode fails with
     * `CheckpointDecodeError` and is left unclaimed.
     */
    readonly claim: (
      checkpointId: string,
      options: ClaimOptions
    ) => Effect.Effect<ClaimResult, ExecutionStoreError | CheckpointDecodeError>
    /**
     * Deletes the checkpoint if `owner` holds its claim — the latest claim
     * is its own, even if the lease ran out, as long as nobody claimed it
     * since. Returns whether it did.
     */
    readonly complete: (checkpointId: string, owner: string) => Effect.Effect<boolean, ExecutionStoreError>
    /**
     * Frees the claim if `owner` holds it (as for `complete`), so the
     * checkpoint can be claimed again at once. Returns whether it did.
     */
    readonly release: (checkpointId: string, owner: string) => Effect.Effect<boolean, ExecutionStoreError>
  }
}

interface Entry {
  readonly checkpoint: Checkpoint
  readonly claim: Claim | undefined
}

/**
 * An in-memory checkpoint store. Every check and its write happen in one
 * synchronous block, so concurrent claims are serialized: exactly one wins.
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
 */
export const makeMemory: Effect.Effect<CheckpointStore.Service> = Effect.sync(() => {
  const entries = new Map<string, Entry>()
  const heldBy = (entry: Entry | undefined, owner: string): entry is Entry => entry?.claim?.owner === owner
  return {
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
  }
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
 */
export const layerMemory: Layer.Layer<CheckpointStore> = Layer.effect(CheckpointStore, makeMemory)
