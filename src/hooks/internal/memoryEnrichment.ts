/**
 * The `MemoryEnrichment` hook (BeforePlanning, seed 000 §10): entities from
 * the request → episodic memory read (the recent window, and with an
 * embedding model the related events and knowledge fragments) → one bounded
 * view appended to `rag_context`. Each read is one `memory_load` run (users'
 * guards, transforms and observers see it; the records it returns are the
 * lines the prompt shows). Reads fail open: a failed read is recorded and
 * the request goes on with what the others returned.
 *
 * Effects: `memory_episodic_read` (recent-window read status and counts),
 * `memory_digest_window` (digest path, whether a compatible digest entry
 * was found, coverage), `memory_planning_context` (domain, entities, section
 * count, view report). The injected text itself is only in the automatic
 * `planning_enrichment:rag_context` effect.
 */
import { Effect, Either, Option } from "effect"
import * as Memory from "../../ai/Memory.js"
import type { Json, JsonObject } from "../../domain/Json.js"
import type { MemoryQuery, MemoryRecord } from "../../domain/Operation.js"
import { enrichmentRagContext, type PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import * as EpisodicMemory from "../../stores/EpisodicMemory.js"
import * as KnowledgeBase from "../../stores/KnowledgeBase.js"
import { VectorStore } from "../../stores/VectorStore.js"
import { messageOf } from "./memoryModel.js"
import type { MemoryServices } from "./memoryServices.js"
import { namedLine, render, reportData, type ViewFields, type ViewLine } from "./memoryView.js"

/** Effect ids. */
export const planningContextEffectId = "memory_planning_context"
export const episodicReadEffectId = "memory_episodic_read"
export const digestWindowEffectId = "memory_digest_window"

/** The event outcomes a read returns unless a `before_memory_load` transform narrows `kinds`. */
export const eventKinds: ReadonlyArray<string> = ["succeeded", "failed", "skipped", "denied"]

/** What the enrichment hook is built with. */
export interface EnrichmentConfig {
  readonly name: string
  readonly services: MemoryServices
  readonly domainOf: (context: PipelineContext) => string
  readonly entitiesOf: (request: string) => ReadonlyArray<string>
  readonly recentWindowMillis: number
  readonly recentLimit: number
  readonly relatedLimit: number
  readonly relatedMinScore: number
  readonly knowledgeLimit: number
  readonly byteBudget: number
}

/** The operation scope of a domain's episodic events and of its knowledge. */
export const episodicScope = (domain: string): string => `episodic:${domain}`
export const knowledgeScope = (domain: string): string => `knowledge:${domain}`

const report = (input: HookEffects.HookEffectInput) => Effect.ignore(HookEffects.report(input))

const eventFields = (section: "recent" | "related", stored: EpisodicMemory.StoredEvent): ViewFields => ({
  section,
  when: new Date(stored.event.occurredAt).toISOString().slice(0, 16) + "Z",
  outcome: stored.event.outcome,
  tool: stored.event.capability,
  entities: stored.event.entities,
  summary: stored.event.summary
})

const knowledgeFields = (text: string): ViewFields => ({ section: "knowledge", summary: text })

/** The digest entries of the recent window: per domain, the newest event seen and the window it was read with. */
interface DigestEntry {
  readonly windowMillis: number
  readonly limit: number
  readonly newestId: string | undefined
}
const maxDigestEntries = 1_000

/**
 * Loads through one `memory_load` run: the body's records carry the named
 * view line as `content`; `fields` remembers what each id shows, so a
 * record a transform rewrote is shown as rewritten and one it dropped is
 * not shown.
 */
const loadLines = <E>(
  scope: string,
  query: MemoryQuery,
  read: (query: MemoryQuery) => Effect.Effect<ReadonlyArray<readonly [string, ViewFields, JsonObject]>, E, VectorStore>,
  services: MemoryServices
) => {
  const fields = new Map<string, ViewFields>()
  return Memory.loadWith(
    scope,
    query,
    (q) =>
      Effect.map(read(q), (rows) =>
        rows.map(([id, view, metadata]): MemoryRecord => {
          fields.set(id, view)
          return { id, content: namedLine(view), metadata }
        }))
  ).pipe(
    Effect.provideService(VectorStore, services.vectors),
    Effect.map((records) =>
      records.map((record): ViewLine => {
        const known = record.id === undefined ? undefined : fields.get(record.id)
        return known === undefined
          ? { fields: { section: "knowledge", summary: record.content }, content: record.content }
          : { fields: known, content: record.content }
      })
    ),
    Effect.either
  )
}

/** Builds the hook. */
export const make = (config: EnrichmentConfig): Hook => {
  const digests = new Map<string, DigestEntry>()
  const { services } = config

  const enrich = (context: PipelineContext) =>
    Effect.gen(function*() {
      const domain = config.domainOf(context)
      const entities = config.entitiesOf(context.request)
      const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)

      // 1. The recent window.
      const recent = yield* loadLines(
        episodicScope(domain),
        { query: context.request, limit: config.recentLimit, kinds: eventKinds },
        (q) =>
          Effect.map(
            EpisodicMemory.recent({
              scope: domain,
              since: Math.max(0, now - config.recentWindowMillis),
              limit: q.limit
            }),
            (events) =>
              events.filter((e) => q.kinds === undefined || q.kinds.includes(e.event.outcome)).map((e) =>
                [e.id, eventFields("recent", e), { section: "recent", event_id: e.id }] as const
              )
          ),
        services
      )
      const recentLines = Either.getOrElse(recent, () => [])
      yield* report({
        effectId: episodicReadEffectId,
        name: "Episodic memory read",
        status: Either.isRight(recent) ? "succeeded" : "failed",
        data: {
          status: Either.isRight(recent) ? "read_succeeded" : "read_failed",
          returned_events: recentLines.length,
          query_limit: config.recentLimit,
          window_ms: config.recentWindowMillis
        },
        ...(Either.isLeft(recent) ? { error: messageOf(recent.left) } : {})
      })

      // 2. The digest of that window: is a compatible entry there, and is it still current?
      const previous = digests.get(domain)
      const compatible = previous !== undefined && previous.windowMillis === config.recentWindowMillis &&
        previous.limit === config.recentLimit
      // The newest line stands for the window's state: a new event changes it.
      const newestId = recentLines[0]?.content
      if (Either.isRight(recent)) {
        digests.delete(domain)
        digests.set(domain, { windowMillis: config.recentWindowMillis, limit: config.recentLimit, newestId })
        if (digests.size > maxDigestEntries) digests.delete(digests.keys().next().value!)
      }
      yield* report({
        effectId: digestWindowEffectId,
        name: "Memory digest window",
        status: Either.isRight(recent) ? "succeeded" : "failed",
        data: {
          digest_path: "recent_window",
          cache_entry_found: compatible,
          unchanged_since_entry: compatible && Either.isRight(recent) && previous.newestId === newestId,
          returned_events: recentLines.length,
          coverage: Either.isLeft(recent)
            ? "unknown"
            : recentLines.length < config.recentLimit
            ? "returned_window"
            : "limited_window"
        }
      })

      // 3. Related events and knowledge, when an embedding model is configured.
      const related: Array<ViewLine> = []
      const knowledge: Array<ViewLine> = []
      const failures: Array<Json> = []
      if (Option.isSome(services.embeddings) && (config.relatedLimit > 0 || config.knowledgeLimit > 0)) {
        const embedded = yield* Effect.either(
          services.embeddings.value.embed([context.request, ...entities].join("\n"))
        )
        if (Either.isLeft(embedded)) failures.push({ read: "embedding", error: embedded.left.message })
        else {
          const vector = embedded.right
          const seen = new Set(recentLines.map((line) => line.content))
          if (config.relatedLimit > 0) {
            const found = yield* loadLines(
              episodicScope(domain),
              {
                query: context.request,
                limit: config.relatedLimit,
                minScore: config.relatedMinScore,
                kinds: eventKinds
              },
              (q) =>
                Effect.map(
                  EpisodicMemory.related({ scope: domain, vector, limit: q.limit, minScore: q.minScore }),
                  (hits) =>
                    hits.filter((h) => q.kinds === undefined || q.kinds.includes(h.event.event.outcome)).map((h) =>
                      [h.event.id, eventFields("related", h.event), {
                        section: "related",
                        event_id: h.event.id,
                        score: h.score
                      }] as const
                    )
                ),
              services
            )
            if (Either.isLeft(found)) failures.push({ read: "related", error: messageOf(found.left) })
            else related.push(...found.right.filter((line) => !seen.has(line.content)))
          }
          if (config.knowledgeLimit > 0) {
            const found = yield* loadLines(
              knowledgeScope(domain),
              { query: context.request, limit: config.knowledgeLimit, minScore: config.relatedMinScore },
              (q) =>
                Effect.map(
                  KnowledgeBase.search({ scope: domain, vector, limit: q.limit, minScore: q.minScore }),
                  (hits) =>
                    hits.map((h) =>
                      [h.fragment.id, knowledgeFields(h.fragment.fragment.text), {
                        section: "knowledge",
                        fragment_id: h.fragment.id,
                        score: h.score
                      }] as const
                    )
                ),
              services
            )
            if (Either.isLeft(found)) failures.push({ read: "knowledge", error: messageOf(found.left) })
            else knowledge.push(...found.right)
          }
        }
      }

      // 4. One bounded view, after whatever RAG text earlier hooks wrote.
      const view = render(domain, [...recentLines, ...related, ...knowledge], config.byteBudget)
      yield* report({
        effectId: planningContextEffectId,
        name: "Memory planning context",
        status: failures.length === 0 && Either.isRight(recent) ? "succeeded" : "failed",
        data: {
          domain,
          entities: [...entities],
          section_count: [recentLines, related, knowledge].filter((s) => s.length > 0).length,
          view: reportData(view.report),
          ...(failures.length === 0 ? {} : { failed_reads: failures })
        }
      })
      if (view.text === undefined) return undefined
      const before = context.enrichments[enrichmentRagContext]
      const text = typeof before === "string" && before.length > 0 ? `${before}\n\n${view.text}` : view.text
      return { enrichments: { [enrichmentRagContext]: text } }
    })

  return {
    name: config.name,
    capabilities: ["enrichments"],
    beforePlanning: (context) => Effect.withSpan(enrich(context), `memory.enrichment`, { captureStackTrace: false })
  }
}
