/**
 * The `KnowledgeExtraction` hook (AfterSynthesis, detached; seed 000 §9,
 * §10): asks the model for 0–3 reusable knowledge fragments from the request
 * and the answer, embeds and stores them — in a fiber of its own, so the
 * response goes out at once and unchanged. Before the hook returns it
 * announces the pending `knowledge_extraction` effect; the detached work
 * then completes that effect with the exact model reply, the normalized
 * fragments and each fragment's outcome.
 *
 * The work runs under a fresh root span (`pipeline.hook.async.knowledge-extraction`)
 * linked to the scheduling span, and is canceled independently of the
 * request: it lives in the builder's scope (the agent's), so it survives the
 * request ending and is interrupted when the agent shuts down. Writes are
 * `memory_store` runs like the recorder's.
 */
import { Effect, Either, FiberSet, Option } from "effect"
import { createHash } from "node:crypto"
import * as Memory from "../../ai/Memory.js"
import type { Json } from "../../domain/Json.js"
import type { PipelineContext } from "../../domain/PipelineContext.js"
import type { Hook } from "../../pipeline/Hook.js"
import * as HookEffects from "../../runtime/HookEffects.js"
import * as KnowledgeBase from "../../stores/KnowledgeBase.js"
import { VectorStore } from "../../stores/VectorStore.js"
import { knowledgeScope } from "./memoryEnrichment.js"
import { ask, escapeXml, messageOf, parseJsonArray, shorten } from "./memoryModel.js"
import type { MemoryServices } from "./memoryServices.js"

/** Effect id. */
export const knowledgeEffectId = "knowledge_extraction"
/** At most this many fragments per answer. */
export const maxFragments = 3
const minFragmentChars = 8
const maxFragmentChars = 500

/** What the knowledge hook is built with. */
export interface KnowledgeConfig {
  readonly name: string
  readonly services: MemoryServices
  readonly domainOf: (context: PipelineContext) => string
  readonly retentionMillis?: number | undefined
}

/** The extraction prompt (the exchange escaped: it is data, not instructions). */
export const promptFor = (request: string, response: string): string =>
  [
    `Extract 0 to ${maxFragments} short, self-contained knowledge fragments from the exchange below:`,
    "facts that would help answer future requests of other users. Leave out anything personal about the user.",
    "Reply with a JSON array of strings only; reply [] when nothing is worth keeping.",
    "",
    `<request>${escapeXml(shorten(request, 2_000).text)}</request>`,
    `<response>${escapeXml(shorten(response, 4_000).text)}</response>`
  ].join("\n")

/** One candidate fragment's fate. */
type Outcome =
  | { readonly text: string; readonly outcome: "accepted" }
  | { readonly text: string; readonly outcome: "rejected"; readonly reason: string }

/** The model's candidates, normalized: strings (or `{ text }`), whitespace collapsed, bounded, distinct, at most 3. */
export const normalize = (entries: ReadonlyArray<unknown>): ReadonlyArray<Outcome> => {
  const out: Array<Outcome> = []
  const seen = new Set<string>()
  let accepted = 0
  for (const entry of entries) {
    const raw = typeof entry === "string"
      ? entry
      : typeof entry === "object" && entry !== null && "text" in entry && typeof entry.text === "string"
      ? entry.text
      : undefined
    if (raw === undefined) {
      out.push({
        text: shorten(JSON.stringify(entry) ?? String(entry), 100).text,
        outcome: "rejected",
        reason: "not_text"
      })
      continue
    }
    const text = raw.replace(/\s+/gu, " ").trim()
    const reason = text.length < minFragmentChars
      ? "too_short"
      : text.length > maxFragmentChars
      ? "too_long"
      : seen.has(text.toLowerCase())
      ? "duplicate"
      : accepted >= maxFragments
      ? "over_limit"
      : undefined
    if (reason !== undefined) {
      out.push({ text: shorten(text, 100).text, outcome: "rejected", reason })
      continue
    }
    seen.add(text.toLowerCase())
    accepted++
    out.push({ text, outcome: "accepted" })
  }
  return out
}

/** A fragment's id: the same text in the same domain is the same fragment. */
const fragmentId = (domain: string, text: string): string =>
  "k-" + createHash("sha256").update(`${domain}\u0000${text.toLowerCase()}`).digest("hex").slice(0, 24)

const report = (input: HookEffects.HookEffectInput) => Effect.ignore(HookEffects.report(input))

/** Builds the hook; detached work runs in `fibers` (the builder's scope). */
export const make = (
  config: KnowledgeConfig,
  fibers: FiberSet.FiberSet<void, never>
): Hook => {
  const { services } = config

  const extract = (context: PipelineContext, response: string, started: number) =>
    Effect.gen(function*() {
      const domain = config.domainOf(context)
      const user = typeof context.metadata.user_id === "string" && context.metadata.user_id.length > 0
        ? context.metadata.user_id
        : undefined
      const finish = (status: "succeeded" | "failed", data: Json, error?: string) =>
        Effect.flatMap(Effect.clockWith((clock) => clock.currentTimeMillis), (now) =>
          report({
            effectId: knowledgeEffectId,
            name: "Knowledge extraction",
            status,
            data,
            startedAt: started,
            duration: Math.max(0, now - started),
            ...(error === undefined ? {} : { error })
          }))
      if (Option.isNone(services.model) || Option.isNone(services.embeddings)) return
      const reply = yield* ask(services.model.value, promptFor(context.request, response))
      if (reply.status !== "returned") {
        return yield* finish("failed", { domain, provider_call_status: reply.status }, reply.error)
      }
      const parsed = parseJsonArray(reply.text ?? "")
      if (Either.isLeft(parsed)) {
        return yield* finish(
          "failed",
          { domain, provider_call_status: "returned", model_response: reply.text ?? "", fragments: [] },
          `model reply unusable: ${parsed.left}`
        )
      }
      const candidates = normalize(parsed.right)
      const outcomes: Array<Json> = []
      let failures = 0
      for (const candidate of candidates) {
        if (candidate.outcome === "rejected") {
          outcomes.push({ text: candidate.text, outcome: "rejected", reason: candidate.reason })
          continue
        }
        const id = fragmentId(domain, candidate.text)
        const stored = yield* Effect.either(
          Effect.flatMap(services.embeddings.value.embed(candidate.text), (embedding) =>
            Memory.storeWith(knowledgeScope(domain), { id, content: candidate.text }, (record) =>
              Effect.map(
                KnowledgeBase.add({
                  id: record.id ?? id,
                  scope: domain,
                  user,
                  embedding,
                  ttlMillis: config.retentionMillis,
                  fragment: { text: record.content, sourceRequestId: context.requestId }
                }),
                (fragment) =>
                  fragment.id
              ).pipe(Effect.provideService(VectorStore, services.vectors))))
        )
        if (Either.isLeft(stored)) {
          failures++
        }
        outcomes.push(
          Either.isRight(stored)
            ? { text: candidate.text, outcome: "stored", fragment_id: stored.right }
            : { text: candidate.text, outcome: "failed", error: messageOf(stored.left) }
        )
      }
      return yield* finish(
        failures === 0 ? "succeeded" : "failed",
        {
          domain,
          provider_call_status: "returned",
          model_response: reply.text ?? "",
          fragments: candidates.filter((c) =>
            c.outcome === "accepted"
          ).map((c) => c.text),
          outcomes
        },
        failures === 0 ? undefined : `${failures} fragment writes failed`
      )
    })

  const stopped = (why: string) =>
    report({
      effectId: knowledgeEffectId,
      name: "Knowledge extraction",
      status: "failed",
      error: `knowledge extraction stopped: ${why}`
    })

  const schedule = (context: PipelineContext, response: string) =>
    Effect.gen(function*() {
      const started = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
      yield* report({
        effectId: knowledgeEffectId,
        name: "Knowledge extraction",
        status: "pending",
        data: { scheduled: true },
        startedAt: started
      })
      const parent = yield* Effect.currentSpan.pipe(Effect.option)
      const work = extract(context, response, started).pipe(
        Effect.withSpan("pipeline.hook.async.knowledge-extraction", {
          root: true,
          captureStackTrace: false,
          links: Option.isSome(parent)
            ? [{ _tag: "SpanLink", span: parent.value, attributes: { "link.kind": "scheduled_by" } }]
            : [],
          attributes: { "request.id": context.requestId }
        }),
        // A detached run ends in a terminal state however it ends: failed on a
        // defect, or when the agent's scope closes first.
        Effect.catchAllDefect((defect) => stopped(`defect: ${messageOf(defect)}`)),
        Effect.onInterrupt(() => stopped("interrupted"))
      )
      // Forked from this fiber (it reports into this invocation), owned by the builder's set.
      yield* FiberSet.run(fibers, work)
      return response
    })

  return { name: config.name, afterSynthesis: schedule }
}
