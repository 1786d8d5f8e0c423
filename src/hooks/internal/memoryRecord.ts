/**
 * The `MemoryRecord` hook (AfterExecution, seed 000 §10, C19): one episodic
 * event per executed step — entities, outcome, importance, occurrence time
 * (when the step ran) apart from recording time — submitted before
 * synthesis. Only the summarizer model call is bounded (`summarizerTimeout`,
 * 2 minutes by default, `AGENT_MEMORY_SUMMARIZER_TIMEOUT`); a timeout, a
 * failure or an unusable reply falls back to the heuristic summary. When the
 * request is canceled the hook stops: no further write is submitted and
 * `episodic_memory_records` ends `failed` with what was submitted so far.
 *
 * Each write is one `memory_store` run (users' transforms may scrub the
 * summary or change the event id; guards may deny it).
 */
import { type Duration, Effect, Either, Option } from "effect"
import * as Memory from "../../ai/Memory.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { ExecutionResults, Hook } from "../../pipeline/Hook.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import * as EpisodicMemory from "../../stores/EpisodicMemory.js"
import { VectorStore } from "../../stores/VectorStore.js"
import { episodicScope } from "./memoryEnrichment.js"
import { ask, messageOf, type ModelReply } from "./memoryModel.js"
import type { MemoryServices } from "./memoryServices.js"
import { type BatchCounts, heuristic, promptFor, readReply, type StepFacts, type Summary } from "./memorySummary.js"

/** Effect id. */
export const recordsEffectId = "episodic_memory_records"

/** What the record hook is built with. */
export interface RecordConfig {
  readonly name: string
  readonly services: MemoryServices
  readonly domainOf: (context: PipelineContext) => string
  /** Request identities added to every event (recording only; nothing else sees them). */
  readonly requestEntities?: ((request: string) => ReadonlyArray<string>) | undefined
  readonly summarizer: "model" | "heuristic"
  readonly summarizerTimeout: Duration.Duration
  readonly batchLimit: number
  readonly retentionMillis?: number | undefined
  /** The hook run's own bound: the summarizer's timeout plus time for the writes. */
  readonly timeout: Duration.Duration
}

const importanceOf = (outcome: StepFacts["outcome"]): number =>
  outcome === "failed" || outcome === "denied" ? 0.8 : outcome === "succeeded" ? 0.5 : 0.2

const parameterEntities = (parameters: JsonObject): ReadonlyArray<string> =>
  Object.values(parameters).filter((v): v is string => typeof v === "string" && v.length > 0 && v.length <= 64)

const factsOf = (
  results: ExecutionResults,
  requestEntities: ReadonlyArray<string>
): ReadonlyArray<StepFacts> => {
  const parameters = new Map<string, JsonObject>()
  for (const phase of results.phases) for (const step of phase.plan.steps) parameters.set(step.step_id, step.parameters)
  return results.steps.map((step) => {
    const params = parameters.get(step.step_id) ?? {}
    return {
      stepId: step.step_id,
      capability: step.capability,
      parameters: params,
      outcome: step.status,
      output: step.output,
      error: step.error,
      occurredAt: step.startedAt,
      entities: distinct([...requestEntities, ...parameterEntities(params)])
    }
  })
}

const distinct = (values: ReadonlyArray<string>): ReadonlyArray<string> => {
  const seen = new Set<string>()
  return values.filter((v) => {
    const key = v.toLowerCase()
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

const report = (input: HookEffects.HookEffectInput) => Effect.ignore(HookEffects.report(input))

/** The summaries of every step: the model's batch first, the heuristic for the rest. */
const summarize = (config: RecordConfig, context: PipelineContext, steps: ReadonlyArray<StepFacts>) =>
  Effect.gen(function*() {
    if (config.summarizer === "heuristic" || Option.isNone(config.services.model)) {
      const cause = config.summarizer === "heuristic" ? "heuristic" : "model_unavailable"
      return {
        summaries: new Map(steps.map((s) => [s.stepId, heuristic(s, cause)] as const)),
        reply: undefined,
        counts: undefined,
        excluded: 0
      }
    }
    const batch = steps.slice(0, config.batchLimit)
    const reply: ModelReply = yield* ask(
      config.services.model.value,
      promptFor(context.request, batch),
      config.summarizerTimeout
    )
    const read = reply.status === "returned" ? readReply(reply.text ?? "", batch) : undefined
    const summaries = new Map<string, Summary>()
    for (const step of steps) {
      const fromModel = read?.summaries.get(step.stepId)
      summaries.set(
        step.stepId,
        fromModel ?? heuristic(step, batch.includes(step) ? "model_unavailable" : "batch_excluded")
      )
    }
    return { summaries, reply, read, counts: read?.counts, excluded: steps.length - batch.length }
  })

const coverage = (
  config: RecordConfig,
  summaries: ReadonlyMap<string, Summary>,
  counts: BatchCounts | undefined,
  excluded: number
): JsonObject => {
  let model = 0
  let shortened = 0
  for (const s of summaries.values()) {
    if (s.source === "model") model++
    if (s.source === "heuristic" && s.shortened) shortened++
  }
  return {
    sources: { model, heuristic: summaries.size - model },
    batch_excluded: excluded,
    batch_limit: config.batchLimit,
    heuristic_shortened: shortened,
    // The built-in batch counts exist only when the summarizer model was asked and replied.
    ...(counts === undefined ? {} : { batch: { entity_fields: { ...counts } } })
  }
}

/** Builds the hook. */
export const make = (config: RecordConfig): Hook => {
  const { services } = config

  const record = (context: PipelineContext, results: ExecutionResults) =>
    Effect.gen(function*() {
      const domain = config.domainOf(context)
      const user = typeof context.metadata.user_id === "string" && context.metadata.user_id.length > 0
        ? context.metadata.user_id
        : undefined
      const steps = factsOf(results, config.requestEntities?.(context.request) ?? [])
      const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      if (steps.length === 0) {
        return yield* report({
          effectId: recordsEffectId,
          name: "Episodic memory records",
          status: "succeeded",
          data: { domain, steps: 0, submitted: 0 },
          summary: "no executed steps to record"
        })
      }
      yield* report({
        effectId: recordsEffectId,
        name: "Episodic memory records",
        status: "pending",
        data: { domain, steps: steps.length, submitted: 0 },
        startedAt: started
      })
      const envelopes: Array<Json> = []
      let submitted = 0
      let errors = 0
      let providerCall: JsonObject = { status: "not_called" }
      const canceled = Effect.suspend(() =>
        Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
          report({
            effectId: recordsEffectId,
            name: "Episodic memory records",
            status: "failed",
            data: {
              domain,
              steps: steps.length,
              submitted,
              write_errors: errors,
              stopped: "request_canceled",
              provider_call: providerCall,
              events: [...envelopes]
            },
            startedAt: started,
            duration: Math.max(0, now - started),
            error: `request canceled: ${submitted} of ${steps.length} events submitted, the rest not written`
          }))
      )
      return yield* Effect.gen(function*() {
        const summarized = yield* summarize(config, context, steps)
        if (summarized.reply !== undefined) {
          providerCall = {
            status: summarized.reply.status,
            duration_ms: summarized.reply.durationMs,
            ...(summarized.reply.error === undefined ? {} : { error: summarized.reply.error }),
            ...(summarized.read?.parseError === undefined ? {} : { parse_error: summarized.read.parseError })
          }
        }
        const texts = steps.map((s) => summarized.summaries.get(s.stepId)!.summary)
        const vectors = Option.isSome(services.embeddings)
          ? yield* Effect.either(services.embeddings.value.embedMany(texts))
          : undefined
        const recordedAt = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        for (const [index, step] of steps.entries()) {
          const summary = summarized.summaries.get(step.stepId)!
          const defaultId = `${context.requestId}:${step.stepId}`
          const entities = distinct([...step.entities, ...summary.entities])
          const embedding = vectors !== undefined && Either.isRight(vectors) ? vectors.right[index] : undefined
          const written = yield* Effect.either(
            Memory.storeWith(
              episodicScope(domain),
              {
                id: defaultId,
                content: summary.summary,
                metadata: { kind: step.outcome, step_id: step.stepId, tool: step.capability }
              },
              (stored) =>
                Effect.map(
                  EpisodicMemory.append({
                    id: stored.id ?? defaultId,
                    scope: domain,
                    user,
                    embedding,
                    ttlMillis: config.retentionMillis,
                    event: {
                      requestId: context.requestId,
                      stepId: step.stepId,
                      capability: step.capability,
                      outcome: step.outcome,
                      entities,
                      importance: importanceOf(step.outcome),
                      summary: stored.content,
                      summarySource: summary.source,
                      ...(summary.shortened ? { summaryShortened: true } : {}),
                      ...(step.error === undefined ? {} : { errorFacts: [step.error.slice(0, 500)] }),
                      occurredAt: step.occurredAt,
                      recordedAt
                    }
                  }),
                  (event) => event.id
                ).pipe(Effect.provideService(VectorStore, services.vectors))
            )
          )
          if (Either.isRight(written)) submitted++
          else errors++
          envelopes.push({
            step_id: step.stepId,
            event_id: Either.isRight(written) ? written.right : defaultId,
            outcome: step.outcome,
            entities: [...entities],
            importance: importanceOf(step.outcome),
            occurred_at: step.occurredAt,
            recorded_at: recordedAt,
            summary_source: summary.source,
            ...(summary.cause === undefined ? {} : { summary_cause: summary.cause }),
            ...(summary.source === "heuristic" && summary.shortened ? { summary_cause_shortened: true } : {}),
            ...(summary.cause === "batch_excluded" ? { batch_limit: config.batchLimit } : {}),
            submitted_event: Either.isRight(written),
            ...(Either.isLeft(written) ? { error: messageOf(written.left) } : {})
          })
        }
        const ended = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
        yield* report({
          effectId: recordsEffectId,
          name: "Episodic memory records",
          status: errors === 0 ? "succeeded" : "failed",
          data: {
            domain,
            steps: steps.length,
            submitted,
            write_errors: errors,
            provider_call: providerCall,
            backend_assigns_event_id: false,
            backend_assigns_timestamp: false,
            ...(vectors !== undefined && Either.isLeft(vectors) ? { embedding_error: vectors.left.message } : {}),
            summary_coverage: coverage(config, summarized.summaries, summarized.counts, summarized.excluded),
            events: envelopes
          },
          startedAt: started,
          duration: Math.max(0, ended - started),
          ...(errors === 0 ? {} : { error: `${errors} of ${steps.length} event writes failed` })
        })
      }).pipe(Effect.onInterrupt(() => canceled))
    })

  return {
    name: config.name,
    timeout: config.timeout,
    afterExecution: (context, results) =>
      Effect.withSpan(record(context, results), "memory.record", { captureStackTrace: false })
  }
}
