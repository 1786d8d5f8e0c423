/**
 * The user fact extraction hook (seed 000 §10 `UserMemoryExtractionHook`):
 * an AfterSynthesis hook that asks the model for durable facts about the
 * user in request + response, keeps the ones that pass the checks
 * (`userMemoryFacts.ts`), and stores each — one `memory_store` operation
 * each, so users' memory hooks may scrub or re-key it — in the user's facts.
 * The response is always returned unchanged.
 *
 * `blocking` does the work before returning. `fireAndRecord` reports the
 * pending `user_memory_extraction` effect before the hook returns and does
 * the work in a fiber of the builder's `FiberSet` (owned by the agent's
 * scope: shutdown interrupts it), which updates the same effect id with the
 * exact model reply, the normalized facts and each fact's outcome.
 */
import type { LanguageModel } from "@effect/ai"
import { Deferred, Duration, Effect, Either, Fiber, FiberSet, Option } from "effect"
import * as Memory from "../../ai/Memory.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import type { MemoryRecord } from "../../domain/Operation.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import * as UserFacts from "../../stores/UserFacts.js"
import { VectorStore } from "../../stores/VectorStore.js"
import { ask, parseJsonArray } from "./memoryModel.js"
import type { MemoryServices } from "./memoryServices.js"
import { scopeOf } from "./userMemoryEnrichment.js"
import { type Candidate, candidateJson, extractionPrompt, normalizeFacts } from "./userMemoryFacts.js"
import type { Settings } from "./userMemoryOptions.js"

/** Effect id of the extraction report. */
export const extractionEffectId = "user_memory_extraction"

/** Detached extractions in flight at most; past it a new one is recorded as refused, not queued. */
export const maxInFlight = 64

const effectName = "User memory extraction"

const report = (input: Omit<HookEffects.HookEffectInput, "effectId" | "name">) =>
  Effect.ignore(HookEffects.report({ effectId: extractionEffectId, name: effectName, ...input }))

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const kindOr = (value: Json | undefined, fallback: UserFacts.Kind): UserFacts.Kind =>
  value === "identity" || value === "preference" || value === "fact" ? value : fallback

const confidenceOr = (value: Json | undefined, fallback: number): number =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 && value <= 1 ? value : fallback

/** Stores one fact through the `memory_store` operation; its outcome as the effect records it. */
const storeFact = (
  settings: Settings,
  services: MemoryServices,
  context: PipelineContext,
  userId: string,
  fact: Candidate
): Effect.Effect<JsonObject> => {
  const note: { embedded: boolean; embeddingError?: string } = { embedded: false }
  const record: MemoryRecord = {
    id: UserFacts.factId(userId, fact.text, settings.tenant),
    content: fact.text,
    metadata: { kind: fact.kind, confidence: fact.confidence, source_request_id: context.requestId }
  }
  // The body writes what the `before_memory_store` transforms left: a
  // scrubbed content is what is embedded and stored.
  const body = (stored: MemoryRecord) =>
    Effect.gen(function*() {
      let embedding: ReadonlyArray<number> | undefined
      if (Option.isSome(services.embeddings)) {
        const embedded = yield* Effect.either(services.embeddings.value.embed(stored.content))
        if (Either.isRight(embedded)) {
          embedding = embedded.right
          note.embedded = true
        } else {
          note.embeddingError = embedded.left.message
        }
      }
      const put = yield* UserFacts.put({
        userId,
        text: stored.content,
        kind: kindOr(stored.metadata?.kind, fact.kind),
        confidence: confidenceOr(stored.metadata?.confidence, fact.confidence),
        sourceRequestId: context.requestId,
        id: stored.id ?? UserFacts.factId(userId, stored.content, settings.tenant),
        tenant: settings.tenant,
        embedding,
        ttl: settings.ttlMillis
      }).pipe(Effect.provideService(VectorStore, services.vectors))
      return put.id
    })
  return Memory.storeWith(scopeOf(userId), record, body).pipe(
    Effect.either,
    Effect.map((outcome): JsonObject => ({
      ...candidateJson(fact),
      outcome: Either.isRight(outcome) ? "stored" : "failed",
      embedded: note.embedded,
      ...(Either.isRight(outcome) ? { id: outcome.right } : { error: messageOf(outcome.left) }),
      ...(note.embeddingError === undefined ? {} : { embedding_error: note.embeddingError })
    }))
  )
}

/** The whole extraction for one exchange, reported as its terminal effect. */
const extract = (
  settings: Settings,
  services: MemoryServices,
  model: LanguageModel.Service,
  context: PipelineContext,
  userId: string,
  response: string
) =>
  Effect.gen(function*() {
    const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const elapsed = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (now) => now - started)
    const reply = yield* ask(
      model,
      extractionPrompt(context.request, response, settings.maxFacts),
      settings.extractionTimeout
    )
    const common: JsonObject = {
      user_id: userId,
      execution: settings.execution,
      state: "finished",
      provider_call_status: reply.status,
      model_duration_ms: reply.durationMs,
      model_response: reply.text ?? null
    }
    if (reply.status !== "returned" || reply.text === undefined) {
      return yield* report({
        status: "failed",
        data: common,
        startedAt: started,
        duration: yield* elapsed,
        summary: `model call ${reply.status}: no facts stored`,
        error: reply.error ?? reply.status
      })
    }
    const parsed = parseJsonArray(reply.text)
    if (Either.isLeft(parsed)) {
      return yield* report({
        status: "failed",
        data: { ...common, parse_status: "invalid" },
        startedAt: started,
        duration: yield* elapsed,
        summary: "the model's reply is not a JSON array: no facts stored",
        error: parsed.left
      })
    }
    const { facts, rejected } = normalizeFacts(parsed.right, settings)
    const outcomes = yield* Effect.forEach(facts, (fact) => storeFact(settings, services, context, userId, fact))
    const failed = outcomes.filter((o) => o.outcome === "failed").length
    yield* report({
      status: failed === 0 ? "succeeded" : "failed",
      data: {
        ...common,
        parse_status: "parsed",
        entries: parsed.right.length,
        normalized_facts: facts.map(candidateJson),
        rejected: rejected.map((r) => ({ index: r.index, reason: r.reason })),
        outcomes,
        stored: outcomes.length - failed,
        failed
      },
      startedAt: started,
      duration: yield* elapsed,
      summary: `${outcomes.length - failed} of ${facts.length} facts stored, ${rejected.length} entries left out`,
      ...(failed === 0 ? {} : { error: `${failed} fact(s) not stored` })
    })
  })

/** The extraction hook; detached work goes to `fibers`. */
export const makeExtraction = (
  settings: Settings,
  services: MemoryServices,
  model: LanguageModel.Service,
  fibers: FiberSet.FiberSet<void>
): Hook => ({
  name: settings.extractionName,
  // Blocking: the model call has its own bound; the run may last that long and a little more.
  ...(settings.execution === "blocking"
    ? { timeout: Duration.sum(settings.extractionTimeout, Duration.seconds(10)) }
    : {}),
  afterSynthesis: (context, response) =>
    Effect.gen(function*() {
      const userId = settings.userId(context)
      if (userId === undefined) return response
      const work = extract(settings, services, model, context, userId, response)
      if (settings.execution === "blocking") {
        yield* work
        return response
      }
      if ((yield* FiberSet.size(fibers)) >= maxInFlight) {
        yield* report({
          status: "failed",
          data: { user_id: userId, execution: settings.execution, state: "refused", in_flight: maxInFlight },
          summary: "too many extractions in flight: this exchange is not extracted",
          error: `${maxInFlight} extractions already in flight`
        })
        return response
      }
      // Announced before the hook returns; the detached fiber updates the same id.
      yield* report({
        status: "pending",
        data: { user_id: userId, execution: settings.execution, state: "scheduled" },
        summary: "extraction runs in the background"
      })
      // The hook returns once the fiber runs, so its interruption handler is
      // in place: an extraction interrupted at shutdown says so.
      const started = yield* Deferred.make<void>()
      const detached = Effect.zipRight(Deferred.succeed(started, undefined), work).pipe(
        Effect.onInterrupt(() =>
          report({
            status: "failed",
            data: { user_id: userId, execution: settings.execution, state: "interrupted" },
            error: "interrupted before it finished (the agent shut down)"
          })
        )
      )
      const fiber = yield* FiberSet.run(fibers, detached)
      // A closed set (the agent is shutting down) never starts it.
      yield* Effect.race(Deferred.await(started), Fiber.await(fiber))
      return response
    })
})
