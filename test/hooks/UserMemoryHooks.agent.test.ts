/**
 * The user memory hooks in a real agent (seed 000 §8.2, §9, §10; seed 002
 * memory hooks), on memory and on a SQLite file: facts extracted in one
 * request reach the next request's planning prompt; the effects the
 * records carry; users' memory operation hooks see and change the reads
 * and writes; `fireAndRecord` announces a pending effect and completes it
 * from a detached fiber; forgetting a user.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Scope } from "effect"
import { Hook } from "effect-agent-pipeline"
import * as UserMemoryHooks from "../../src/hooks/UserMemoryHooks.js"
import * as UserFacts from "../../src/stores/UserFacts.js"
import {
  backends,
  effectsOf,
  extractor,
  gatedModel,
  makeAgent,
  planPrompts,
  profileBlock
} from "./UserMemorySupport.js"

const seed = (userId: string, text: string, kind: UserFacts.Kind) =>
  UserFacts.put({ userId, text, kind, confidence: 0.9, sourceRequestId: "seed" })

const factsReply = JSON.stringify([
  { text: "Prefers window seats", kind: "preference", confidence: 0.9 },
  { text: "Lives in Lisbon", kind: "identity", confidence: 0.95 },
  { text: "Likes jazz", kind: "hobby", confidence: 0.9 }
])

const enrichment = "user-memory-enrichment"
const extraction = "user-memory-extraction"

for (const backend of backends) {
  describe(`user memory in an agent: ${backend.name}`, () => {
    it.scoped("C19: facts extracted from one request are in the next one's prompt as the user_profile block; the response is unchanged; the effects carry metadata, the text only in planning_enrichment:user_profile", () =>
      Effect.gen(function*() {
        const model = yield* extractor(factsReply)
        const memory = yield* UserMemoryHooks.build({ model: model.service, execution: "blocking" })
        const agent = yield* makeAgent(memory.hooks, "Booked.")
        const first = yield* agent.pipeline.process({
          request: "I live in Lisbon; book me a window seat",
          requestId: "r-1",
          metadata: { user_id: "u-1" }
        })
        expect(first._tag === "Completed" && first.response.response).toBe("Booked.")
        const extracted = effectsOf(yield* agent.test.record("r-1"), extraction)["user_memory_extraction"]
        expect(extracted?.status).toBe("succeeded")
        expect(extracted?.data).toMatchObject({
          user_id: "u-1",
          execution: "blocking",
          provider_call_status: "returned",
          model_response: factsReply,
          parse_status: "parsed",
          entries: 3,
          normalized_facts: [
            { text: "Prefers window seats", kind: "preference", confidence: 0.9 },
            { text: "Lives in Lisbon", kind: "identity", confidence: 0.95 }
          ],
          rejected: [{ index: 2, reason: "unknown_kind" }],
          outcomes: [
            { text: "Prefers window seats", outcome: "stored", id: UserFacts.factId("u-1", "Prefers window seats") },
            { text: "Lives in Lisbon", outcome: "stored", id: UserFacts.factId("u-1", "Lives in Lisbon") }
          ],
          stored: 2,
          failed: 0
        })

        yield* agent.pipeline.process({ request: "and a hotel", requestId: "r-2", metadata: { user_id: "u-1" } })
        const block = "<user_profile>\n- Lives in Lisbon\n- Prefers window seats\n</user_profile>"
        expect(profileBlock(planPrompts(agent)[1]!)).toBe(block)
        const effects = effectsOf(yield* agent.test.record("r-2"), enrichment)
        expect(effects["user_memory_context"]?.status).toBe("succeeded")
        expect(effects["user_memory_context"]?.data).toEqual({
          user_id_present: true,
          query_limit: 10,
          budget_bytes: 2_000,
          read_status: "read_succeeded",
          retrieval: "recent",
          facts_found: 2,
          facts_by_kind: { identity: 1, preference: 1, fact: 0 },
          facts_injected: 2,
          facts_dropped_by_budget: 0,
          bytes: new TextEncoder().encode(block).length
        })
        expect(JSON.stringify(effects["planning_enrichment:user_profile"]?.data)).toContain(
          JSON.stringify(block).slice(1, -1)
        )
        expect(JSON.stringify(effects["user_memory_context"])).not.toContain("window seats")
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("no user id: the enrichment records a no-op, no profile reaches the prompt, the extractor is not called", () =>
      Effect.gen(function*() {
        yield* seed("u-1", "Is called Ada", "identity")
        const model = yield* extractor(factsReply)
        const memory = yield* UserMemoryHooks.build({ model: model.service, execution: "blocking" })
        const agent = yield* makeAgent(memory.hooks)
        yield* agent.pipeline.process({ request: "hello", requestId: "anon" })
        expect(planPrompts(agent)[0]).not.toContain("<user_profile>")
        const record = yield* agent.test.record("anon")
        expect(effectsOf(record, enrichment)["user_memory_context"]?.data).toEqual({
          user_id_present: false,
          read_status: "skipped"
        })
        expect(effectsOf(record, enrichment)["planning_enrichment:user_profile"]).toBeUndefined()
        expect(effectsOf(record, extraction)).toEqual({})
        expect(model.prompts).toEqual([])
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("a user's before_memory_load transform that lowers the limit is honoured", () =>
      Effect.gen(function*() {
        yield* seed("u-1", "Is called Ada", "identity")
        yield* seed("u-1", "Prefers tea", "preference")
        yield* seed("u-1", "Has a cat", "fact")
        const seen: Array<unknown> = []
        const limitOne = Hook.make({
          name: "limit-one",
          beforeMemoryLoad: (call, query) =>
            Effect.sync(() => {
              seen.push(call.payload)
              return { ...query, limit: 1 }
            })
        })
        const memory = yield* UserMemoryHooks.build()
        const agent = yield* makeAgent([limitOne, ...memory.hooks])
        yield* agent.pipeline.process({ request: "hi", requestId: "r", metadata: { user_id: "u-1" } })
        expect(profileBlock(planPrompts(agent)[0]!)).toBe("<user_profile>\n- Is called Ada\n</user_profile>")
        expect(seen).toEqual([{ scope: "user:u-1", query: "hi", limit: 10, minScore: 0.3 }])
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("a user's after_memory_load transform that drops a fact removes it from the prompt", () =>
      Effect.gen(function*() {
        yield* seed("u-1", "Is called Ada", "identity")
        yield* seed("u-1", "Allergic to peanuts", "fact")
        const dropHealth = Hook.make({
          name: "drop-health",
          afterMemoryLoad: (_call, records) => Effect.succeed(records.filter((r) => !r.content.includes("peanuts")))
        })
        const memory = yield* UserMemoryHooks.build()
        const agent = yield* makeAgent([...memory.hooks, dropHealth])
        yield* agent.pipeline.process({ request: "hi", requestId: "r", metadata: { user_id: "u-1" } })
        const prompt = planPrompts(agent)[0]!
        expect(profileBlock(prompt)).toBe("<user_profile>\n- Is called Ada\n</user_profile>")
        expect(prompt).not.toContain("peanuts")
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("a user's before_memory_store transform scrubs a fact before it is stored", () =>
      Effect.gen(function*() {
        const model = yield* extractor(factsReply)
        const scrub = Hook.make({
          name: "scrub-city",
          beforeMemoryStore: (_call, record) =>
            Effect.succeed({ ...record, content: record.content.replace("Lisbon", "[city]") })
        })
        const memory = yield* UserMemoryHooks.build({ model: model.service, execution: "blocking" })
        const agent = yield* makeAgent([...memory.hooks, scrub])
        yield* agent.pipeline.process({ request: "hi", requestId: "r", metadata: { user_id: "u-1" } })
        expect((yield* UserFacts.list("u-1")).map((f) => f.text).sort()).toEqual([
          "Lives in [city]",
          "Prefers window seats"
        ])
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("fireAndRecord: the response returns before the model replies; the effect goes pending → succeeded under the same id", () =>
      Effect.gen(function*() {
        const gate = yield* Deferred.make<void>()
        const memory = yield* UserMemoryHooks.build({ model: yield* gatedModel(gate, factsReply) })
        const agent = yield* makeAgent(memory.hooks, "On it.")
        const result = yield* agent.pipeline.process({ request: "hi", requestId: "r", metadata: { user_id: "u-1" } })
        expect(result._tag === "Completed" && result.response.response).toBe("On it.")
        const pending = yield* agent.test.record("r")
        expect(effectsOf(pending, extraction)["user_memory_extraction"]).toMatchObject({
          status: "pending",
          data: { user_id: "u-1", execution: "fireAndRecord", state: "scheduled" }
        })
        expect(yield* UserFacts.list("u-1")).toEqual([])

        yield* Deferred.succeed(gate, undefined)
        yield* memory.idle
        const done = yield* agent.test.record("r")
        const runs = done.hookInvocations.filter((i) => i.name === extraction)
        expect(runs.flatMap((i) => i.effects.map((e) => [e.effectId, e.status]))).toEqual([
          ["user_memory_extraction", "succeeded"]
        ])
        expect(runs[0]!.effects[0]!.data).toMatchObject({
          state: "finished",
          model_response: factsReply,
          normalized_facts: [{ text: "Prefers window seats" }, { text: "Lives in Lisbon" }],
          outcomes: [{ outcome: "stored" }, { outcome: "stored" }]
        })
        expect(yield* UserFacts.list("u-1")).toHaveLength(2)
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("closing the builder's scope interrupts a detached extraction: the effect says so and idle returns", () =>
      Effect.gen(function*() {
        const gate = yield* Deferred.make<void>()
        const scope = yield* Scope.make()
        const memory = yield* UserMemoryHooks.build({ model: yield* gatedModel(gate, factsReply) }).pipe(
          Scope.extend(scope)
        )
        const agent = yield* makeAgent(memory.hooks)
        yield* agent.pipeline.process({ request: "hi", requestId: "r", metadata: { user_id: "u-1" } })
        yield* Scope.close(scope, Exit.void)
        yield* memory.idle
        const effect = effectsOf(yield* agent.test.record("r"), extraction)["user_memory_extraction"]
        expect(effect).toMatchObject({ status: "failed", data: { state: "interrupted" } })
        expect(yield* UserFacts.list("u-1")).toEqual([])
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("forget: a forgotten user's profile is gone from the next prompt; another user's is still there", () =>
      Effect.gen(function*() {
        yield* seed("u-1", "Is called Ada", "identity")
        yield* seed("u-2", "Is called Bob", "identity")
        const memory = yield* UserMemoryHooks.build()
        const agent = yield* makeAgent(memory.hooks)
        expect(yield* UserFacts.forget("u-1")).toBe(1)
        yield* agent.pipeline.process({ request: "hi", requestId: "a", metadata: { user_id: "u-1" } })
        yield* agent.pipeline.process({ request: "hi", requestId: "b", metadata: { user_id: "u-2" } })
        const [forUser1, forUser2] = planPrompts(agent)
        expect(profileBlock(forUser1!)).toBeUndefined()
        expect(profileBlock(forUser2!)).toBe("<user_profile>\n- Is called Bob\n</user_profile>")
      }).pipe(Effect.provide(backend.layer())))
  })
}
