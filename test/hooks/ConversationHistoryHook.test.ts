/**
 * The memory-backed conversation history hook (seed 000 §10
 * `ConversationHistoryHook`), called directly and in a real agent on
 * memory and a SQLite file: turns appended after synthesis become the next
 * request's `conversation_history` (`role: content` lines, newest kept in
 * the budget), sessions are apart, the reads and writes are memory
 * operations users' hooks see, and no session id means nothing happens.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock } from "effect"
import { ConversationHistory, Hook, ShortCircuit } from "effect-agent-pipeline"
import * as ConversationHistoryHook from "../../src/hooks/ConversationHistoryHook.js"
import { layerMemory, VectorStore } from "../../src/stores/VectorStore.js"
import { backends, contextFor, effectsOf, makeAgent, planPrompts } from "./UserMemorySupport.js"

const historyOf = (prompt: string): string | undefined =>
  /<conversation_history>\n?([\s\S]*?)\n?<\/conversation_history>/.exec(prompt)?.[1]

const historyEnrichment = (result: Hook.BeforePlanningResult | void): unknown =>
  typeof result === "object" && result !== null ? result.enrichments?.["conversation_history"] : undefined

const turnCount = (session: string) =>
  Effect.flatMap(VectorStore, (store) =>
    Effect.map(
      store.recent({ collection: ConversationHistoryHook.collection, partition: session, limit: 1000 }),
      (items) => items.length
    ))

describe("ConversationHistoryHook (direct)", () => {
  it.effect("appends the user and assistant turns after synthesis (response unchanged); the next load renders them like the default preparer", () =>
    Effect.gen(function*() {
      const hook = yield* ConversationHistoryHook.make()
      const context = contextFor("r-1", "What is the weather in Paris?", { session_id: "s-1" })
      expect(historyEnrichment(yield* hook.beforePlanning!(context, ShortCircuit.defaultGate))).toBeUndefined()
      expect(yield* hook.afterSynthesis!(context, "Sunny, 21°C.")).toBe("Sunny, 21°C.")
      yield* TestClock.adjust(1_000)
      const next = contextFor("r-2", "And tomorrow?", { session_id: "s-1" })
      const expected = ConversationHistory.makeDefaultPreparer().prepare([
        { role: "user", content: "What is the weather in Paris?" },
        { role: "assistant", content: "Sunny, 21°C." }
      ])
      expect(historyEnrichment(yield* hook.beforePlanning!(next, ShortCircuit.defaultGate))).toBe(
        expected._tag === "Some" ? expected.value : "unreachable"
      )
    }).pipe(Effect.provide(layerMemory())))

  it.effect("no session id: nothing is loaded or stored", () =>
    Effect.gen(function*() {
      const hook = yield* ConversationHistoryHook.make()
      const context = contextFor("r-1", "hello")
      expect(historyEnrichment(yield* hook.beforePlanning!(context, ShortCircuit.defaultGate))).toBeUndefined()
      expect(yield* hook.afterSynthesis!(context, "hi")).toBe("hi")
      // The collection is empty: a remove of all of it removes nothing.
      const store = yield* VectorStore
      expect(yield* store.remove({ collection: ConversationHistoryHook.collection })).toBe(0)
      yield* hook.afterSynthesis!(contextFor("r-2", "hello", { session_id: "s" }), "hi")
      expect(yield* store.remove({ collection: ConversationHistoryHook.collection })).toBe(2)
    }).pipe(Effect.provide(layerMemory())))

  it.effect("maxTurns and the byte budget keep the newest turns, oldest first", () =>
    Effect.gen(function*() {
      const hook = yield* ConversationHistoryHook.make({
        maxTurns: 3,
        sessionId: (ctx) => String(ctx.metadata["chat"])
      })
      for (let i = 1; i <= 3; i++) {
        yield* hook.afterSynthesis!(contextFor(`r-${i}`, `question ${i}`, { chat: "c" }), `answer ${i}`)
        yield* TestClock.adjust(1_000)
      }
      const load = (h: Hook.Hook) =>
        Effect.map(
          h.beforePlanning!(contextFor("r-9", "q", { chat: "c" }), ShortCircuit.defaultGate),
          historyEnrichment
        )
      expect(yield* load(hook)).toBe("assistant: answer 2\nuser: question 3\nassistant: answer 3")
      const tight = yield* ConversationHistoryHook.make({
        budgetBytes: 64,
        sessionId: (ctx) => String(ctx.metadata["chat"])
      })
      const text = String(yield* load(tight))
      expect(text).toBe("assistant: answer 2\nuser: question 3\nassistant: answer 3")
      expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(64)
      expect(ConversationHistoryHook.renderHistory(["a: 1", "b: 22", "c: 333"], 12)).toEqual(["b: 22", "c: 333"])
    }).pipe(Effect.provide(layerMemory())))

  it.effect("record: false has no AfterSynthesis handler; ttl expires stored turns on the Clock", () =>
    Effect.gen(function*() {
      const readOnly = yield* ConversationHistoryHook.make({ record: false })
      expect(readOnly.afterSynthesis).toBeUndefined()
      const hook = yield* ConversationHistoryHook.make({ ttl: "1 hour" })
      yield* hook.afterSynthesis!(contextFor("r-1", "hi", { session_id: "s" }), "hello")
      expect(yield* turnCount("s")).toBe(2)
      yield* TestClock.adjust("1 hour")
      expect(yield* turnCount("s")).toBe(0)
    }).pipe(Effect.provide(layerMemory())))

  it.effect("invalid options are a typed InvalidMemoryOptions naming the option", () =>
    Effect.gen(function*() {
      const invalid: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
        ["maxTurns", { maxTurns: 0 }],
        ["budgetBytes", { budgetBytes: 1 }],
        ["name", { name: "" }],
        ["ttl", { ttl: -1 }],
        ["sessionId", { sessionId: "s-1" }]
      ]
      for (const [option, options] of invalid) {
        // Untyped input, as a JavaScript caller or configuration would pass it.
        const error = yield* Effect.flip(ConversationHistoryHook.make(options as ConversationHistoryHook.Options))
        expect(error._tag).toBe("InvalidMemoryOptions")
        expect(error.option).toBe(option)
      }
    }).pipe(Effect.provide(layerMemory())))
})

for (const backend of backends) {
  describe(`ConversationHistoryHook in an agent: ${backend.name}`, () => {
    it.scoped("turns of earlier requests are the next request's <conversation_history>; another session sees none; effects record counts", () =>
      Effect.gen(function*() {
        const hook = yield* ConversationHistoryHook.make()
        const agent = yield* makeAgent([hook], "Noted.")
        yield* agent.pipeline.process({ request: "My name is Ada", requestId: "r-1", metadata: { session_id: "s-1" } })
        yield* TestClock.adjust(1_000)
        yield* agent.pipeline.process({ request: "I like tea", requestId: "r-2", metadata: { session_id: "s-1" } })
        yield* TestClock.adjust(1_000)
        yield* agent.pipeline.process({
          request: "What is my name?",
          requestId: "r-3",
          metadata: { session_id: "s-1" }
        })
        yield* agent.pipeline.process({ request: "Who am I?", requestId: "r-4", metadata: { session_id: "s-2" } })
        const prompts = planPrompts(agent)
        expect(historyOf(prompts[0]!)).toBeUndefined()
        expect(historyOf(prompts[2]!)).toBe(
          "user: My name is Ada\nassistant: Noted.\nuser: I like tea\nassistant: Noted."
        )
        expect(historyOf(prompts[3]!)).toBeUndefined()
        const record = yield* agent.test.record("r-3")
        const effects = effectsOf(record, "conversation-history")
        expect(effects["conversation_history_context"]?.data).toMatchObject({
          session_id_present: true,
          read_status: "read_succeeded",
          turns_found: 4,
          turns_injected: 4
        })
        expect(effects["conversation_history_record"]).toMatchObject({
          status: "succeeded",
          data: { submitted: 2, failed: 0 }
        })
        expect(effects["planning_enrichment:conversation_history"]).toBeDefined()
      }).pipe(Effect.provide(backend.layer())))

    it.scoped("users' memory hooks see the turns: an after_memory_load filter removes a turn from the prompt, a before_memory_store scrub changes what is stored", () =>
      Effect.gen(function*() {
        const scopes: Array<string> = []
        const memoryHooks = Hook.make({
          name: "memory-policy",
          beforeMemoryStore: (call, record) =>
            Effect.sync(() => {
              scopes.push(call.payload.scope)
              return { ...record, content: record.content.replace(/\d{4}-\d{4}/g, "[number]") }
            }),
          afterMemoryLoad: (_call, records) =>
            Effect.succeed(records.filter((r) => !r.content.startsWith("assistant:")))
        })
        const hook = yield* ConversationHistoryHook.make()
        const agent = yield* makeAgent([hook, memoryHooks], "Got it.")
        yield* agent.pipeline.process({
          request: "Call me at 5555-1234",
          requestId: "r-1",
          metadata: { session_id: "s" }
        })
        yield* TestClock.adjust(1_000)
        yield* agent.pipeline.process({ request: "Thanks", requestId: "r-2", metadata: { session_id: "s" } })
        expect(historyOf(planPrompts(agent)[1]!)).toBe("user: Call me at [number]")
        expect(scopes).toEqual(["conversation:s", "conversation:s", "conversation:s", "conversation:s"])
      }).pipe(Effect.provide(backend.layer())))
  })
}
