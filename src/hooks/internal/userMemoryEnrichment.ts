/**
 * The user memory enrichment hook (seed 000 §10 `UserMemoryEnrichmentHook`,
 * §5.3): a BeforePlanning hook that reads the user's identity facts and the
 * facts relevant to the request — one `memory_load` operation, so users'
 * memory hooks see and may change the read — and writes them as the
 * `user_profile` enrichment, its own `<user_profile>` block with every fact
 * escaped (the builder inserts that key verbatim).
 */
import { Effect, Either, Option } from "effect"
import * as Memory from "../../ai/Memory.js"
import { byteLength } from "../../domain/internal/utf8Chunks.js"
import type { JsonObject } from "../../domain/Json.js"
import type { MemoryQuery, MemoryRecord } from "../../domain/Operation.js"
import { enrichmentUserProfile, type PipelineContext } from "../../domain/PipelineContext.js"
import { render } from "../../domain/UserProfile.js"
import type { Hook } from "../../pipeline/Hook.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import * as UserFacts from "../../stores/UserFacts.js"
import { VectorStore } from "../../stores/VectorStore.js"
import type { MemoryServices } from "./memoryServices.js"
import type { Settings } from "./userMemoryOptions.js"

/** Effect id of the enrichment's read report. */
export const contextEffectId = "user_memory_context"

/** The memory scope of a user's facts, as memory operation hooks see it. */
export const scopeOf = (userId: string): string => `user:${userId}`

/** How the non-identity facts were chosen. */
type Retrieval = "embedding" | "recent" | "recent_after_embedding_error"

const kindOf = (record: MemoryRecord): UserFacts.Kind => {
  const kind = record.metadata?.kind
  return kind === "identity" || kind === "preference" ? kind : "fact"
}

const recordOf = (fact: UserFacts.UserFact, source: string, score?: number): MemoryRecord => ({
  id: fact.id,
  content: fact.text,
  metadata: {
    kind: fact.kind,
    confidence: fact.confidence,
    source,
    ...(score === undefined ? {} : { score })
  }
})

/** Identity facts first, then the relevant (or newest) others; `kinds` and `limit` honoured. */
const readFacts = (
  settings: Settings,
  services: MemoryServices,
  userId: string,
  query: MemoryQuery,
  path: { retrieval: Retrieval }
) =>
  Effect.gen(function*() {
    const wanted = (kind: UserFacts.Kind) => query.kinds === undefined || query.kinds.includes(kind)
    const tenant = settings.tenant
    const limit = Math.max(0, Math.min(query.limit, 1_000))
    if (limit === 0) return []
    const identityLimit = Math.min(settings.identityLimit, limit)
    const identity = identityLimit > 0 && wanted("identity")
      ? yield* UserFacts.identity(userId, { tenant, limit: identityLimit })
      : []
    const records = identity.map((fact) => recordOf(fact, "identity"))
    let others: ReadonlyArray<MemoryRecord> = []
    const vector = Option.isSome(services.embeddings)
      ? yield* Effect.either(services.embeddings.value.embed(query.query))
      : undefined
    if (vector !== undefined && Either.isRight(vector)) {
      path.retrieval = "embedding"
      const hits = yield* UserFacts.relevant(userId, {
        tenant,
        vector: vector.right,
        limit,
        minScore: query.minScore ?? settings.minScore
      })
      others = hits.map((hit) => recordOf(hit.fact, "relevant", hit.score))
    } else {
      path.retrieval = vector === undefined ? "recent" : "recent_after_embedding_error"
      others = (yield* UserFacts.list(userId, { tenant, limit })).map((fact) => recordOf(fact, "recent"))
    }
    const seen = new Set(records.map((r) => r.id))
    for (const record of others) {
      if (records.length >= limit) break
      if (seen.has(record.id) || !wanted(kindOf(record))) continue
      seen.add(record.id)
      records.push(record)
    }
    return records
  }).pipe(Effect.provideService(VectorStore, services.vectors))

/**
 * The `<user_profile>` block of the records that fit `budgetBytes`, in
 * order (a fact that does not fit is left out; a shorter later one may still fit).
 */
export const renderProfile = (records: ReadonlyArray<MemoryRecord>, budgetBytes: number) => {
  const facts: Array<string> = []
  let block = ""
  let dropped = 0
  for (const record of records) {
    const candidate = render({ facts: [...facts, record.content] })
    if (byteLength(candidate) > budgetBytes) {
      dropped++
      continue
    }
    facts.push(record.content)
    block = candidate
  }
  return { block, injected: facts.length, dropped }
}

const countKinds = (records: ReadonlyArray<MemoryRecord>): JsonObject => {
  const counts = { identity: 0, preference: 0, fact: 0 }
  for (const record of records) counts[kindOf(record)]++
  return counts
}

const messageOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

const report = (input: HookEffects.HookEffectInput) => Effect.ignore(HookEffects.report(input))

const enrich = (settings: Settings, services: MemoryServices, context: PipelineContext) =>
  Effect.gen(function*() {
    const userId = settings.userId(context)
    const name = "User memory context"
    if (userId === undefined) {
      yield* report({
        effectId: contextEffectId,
        name,
        status: "succeeded",
        data: { user_id_present: false, read_status: "skipped" },
        summary: "no user id: nothing read"
      })
      return undefined
    }
    const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const path: { retrieval: Retrieval } = { retrieval: "recent" }
    const query: MemoryQuery = { query: context.request, limit: settings.limit, minScore: settings.minScore }
    const loaded = yield* Effect.either(
      Memory.loadWith(scopeOf(userId), query, (q) => readFacts(settings, services, userId, q, path))
    )
    const ended = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
    const common = { user_id_present: true, query_limit: settings.limit, budget_bytes: settings.budgetBytes }
    if (Either.isLeft(loaded)) {
      // Fail open: the request is planned without the profile.
      yield* report({
        effectId: contextEffectId,
        name,
        status: "failed",
        data: { ...common, read_status: "read_failed" },
        startedAt: started,
        duration: ended - started,
        error: messageOf(loaded.left)
      })
      return undefined
    }
    const records = loaded.right
    const { block, dropped, injected } = renderProfile(records, settings.budgetBytes)
    yield* report({
      effectId: contextEffectId,
      name,
      status: "succeeded",
      data: {
        ...common,
        read_status: "read_succeeded",
        retrieval: path.retrieval,
        facts_found: records.length,
        facts_by_kind: countKinds(records),
        facts_injected: injected,
        facts_dropped_by_budget: dropped,
        bytes: byteLength(block)
      },
      summary: `${injected} of ${records.length} facts injected (${byteLength(block)} bytes)`,
      startedAt: started,
      duration: ended - started
    })
    if (block.length === 0) return undefined
    return { enrichments: { [enrichmentUserProfile]: block } }
  })

/** The enrichment hook: it needs nothing at request time (its backends were resolved at build). */
export const makeEnrichment = (settings: Settings, services: MemoryServices): Hook => ({
  name: settings.enrichmentName,
  capabilities: ["enrichments"],
  beforePlanning: (context) => enrich(settings, services, context)
})
