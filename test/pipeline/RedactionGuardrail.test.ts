/**
 * The redaction guardrail through a real pipeline (issue 23, seed 004):
 * tool output is redacted before the model sees it (exempt tools pass
 * unchanged), the final response, the raw draft, streamed tokens and the
 * caller's errors are redacted, and the stored record keeps no secret in
 * any field unless raw evidence is opted into. R-numbers name the rules.
 */
import { Tool } from "@effect/ai"
import { SqliteClient } from "@effect/sql-sqlite-node"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Context, Deferred, Effect, FastCheck as fc, Fiber, Layer, Schema, Stream } from "effect"
import {
  Agent,
  type ExecutionRecord,
  ExecutionStore,
  Guardrails,
  type Hook,
  HookRegistry,
  Pipeline,
  ToolRegistry
} from "effect-agent-pipeline"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as SqlStores from "../../src/stores/sql/SqlStores.js"
import { corpus } from "../fixtures/secrets/corpus.js"
import { propertyRuns } from "../support/PropertyRuns.js"

const NAMESPACE = "vault"
const Echo = (name: string) =>
  Tool.make(name, {
    description: `returns its text (${name})`,
    parameters: { text: Schema.String },
    success: Schema.Struct({ note: Schema.String, nested: Schema.Array(Schema.String) })
  })
const echoTool = (name: string) =>
  ToolRegistry.entry({
    namespace: NAMESPACE,
    agent: "vault-service",
    tool: Echo(name),
    handler: ({ text }) => Effect.succeed({ note: `found: ${text}`, nested: [text] })
  })
const tools = [echoTool("vault_read"), echoTool("ticket_lookup")]
const step = (stepId: string, capability: string, text: string) => ({
  step_id: stepId,
  namespace: NAMESPACE,
  agent: "vault-service",
  capability,
  parameters: { text }
})

const secretA = corpus.secrets.find((s) => s.kind === "openai_key")!.text
const secretB = corpus.secrets.find((s) => s.kind === "github_token")!.text
const email = corpus.secrets.find((s) => s.kind === "email")!.text

interface Setup {
  readonly plans: ReadonlyArray<unknown>
  readonly synthesis: string | ((prompt: string) => string)
  readonly chunks?: ReadonlyArray<string>
  readonly redaction?: Guardrails.RedactionOptions
  readonly hooks?: ReadonlyArray<Hook.Hook>
  readonly store?: Layer.Layer<ExecutionStore.ExecutionStore>
}

const agentWith = (setup: Setup) =>
  Effect.gen(function*() {
    const layer = Agent.layerTest({
      script: {
        plans: setup.plans,
        synthesis: setup.synthesis,
        ...(setup.chunks === undefined ? {} : { chunks: setup.chunks })
      },
      tools,
      hooks: setup.hooks ?? [],
      redaction: setup.redaction ?? {},
      options: { modelCalls: "full" },
      ...(setup.store === undefined ? {} : { executionStore: setup.store })
    })
    // The agent lives as long as the test's scope (a SQLite file stays open).
    const context = yield* Layer.build(layer)
    const test = Context.get(context, Agent.TestAgent)
    return {
      pipeline: Context.get(context, Pipeline.Pipeline),
      prompts: test.prompts,
      record: (id: string) => Effect.orDie(test.record(id))
    }
  })

/** Every text of the record, as stored. */
const storedText = (record: ExecutionRecord.ExecutionRecord) => JSON.stringify(record)

describe("redaction guardrail: tool output, response and record", () => {
  it.scoped("R1: a tool's secret is redacted before the model sees it; an exempt tool's output reaches it unchanged", () =>
    Effect.gen(function*() {
      const agent = yield* agentWith({
        plans: [{ steps: [step("s1", "vault_read", secretA), step("s2", "ticket_lookup", secretB)], terminal: true }],
        synthesis: "done",
        redaction: { allowTools: ["ticket_lookup"] }
      })
      const result = yield* agent.pipeline.process({ request: "read the vault", requestId: "r1" })
      const synthesisPrompt = agent.prompts.find((p) => p.kind === "text")!.prompt
      expect(synthesisPrompt).not.toContain(secretA)
      expect(synthesisPrompt).toContain("[REDACTED:openai_key]")
      // The operator exempted ticket_lookup: the model gets its output as it was.
      expect(synthesisPrompt).toContain(secretB)
      const steps = result._tag === "Completed" ? result.response.phases[0]!.steps : []
      expect(steps[0]!.output).toEqual({
        note: "found: [REDACTED:openai_key]",
        nested: ["[REDACTED:openai_key]"]
      })
      const record = yield* agent.record("r1")
      // The hook run that redacted says what it found (kinds, never text).
      const runs = record.hookInvocations.filter((i) => i.name === "redaction" && i.stage === "after_tool")
      expect(runs.map((r) => [r.stepId, r.contributionHash === undefined ? "unchanged" : "rewrote"])).toEqual([
        ["s1", "rewrote"],
        ["s2", "unchanged"]
      ])
      expect(runs[0]!.effects[0]!.data).toEqual({ target: "tool_output", tool: "vault_read", kinds: ["openai_key"] })
      // R5: stored, even the exempt tool's output and the plan's parameters are redacted.
      expect(storedText(record)).not.toContain(secretA)
      expect(storedText(record)).not.toContain(secretB)
    }))

  it.scoped("R2: a secret the model writes is redacted in the response, the raw draft and every stored field", () =>
    Effect.gen(function*() {
      const draft = `Your key is ${secretA}; mail ${email}.`
      const agent = yield* agentWith({ plans: [{ steps: [], terminal: true }], synthesis: draft })
      const result = yield* agent.pipeline.process({ request: `remind me of ${secretB}`, requestId: "r2" })
      expect(result._tag).toBe("Completed")
      if (result._tag !== "Completed") return
      expect(result.response.response).toBe("Your key is [REDACTED:openai_key]; mail [REDACTED:email].")
      expect(result.response.rawDraft).toBe(result.response.response)
      const record = yield* agent.record("r2")
      expect(record.rawDraft).toBe("Your key is [REDACTED:openai_key]; mail [REDACTED:email].")
      expect(record.finalResponse).toBe(record.rawDraft)
      expect(record.request).toBe("remind me of [REDACTED:github_token]")
      expect(record.modelCalls?.length).toBeGreaterThan(0)
      for (const call of record.modelCalls ?? []) {
        expect(call.prompt ?? "").not.toContain(secretB)
        expect(call.output ?? "").not.toContain(secretA)
      }
      expect(storedText(record)).not.toContain(secretA)
      expect(storedText(record)).not.toContain(secretB)
      expect(storedText(record)).not.toContain(email)
    }))

  it.scoped("R3: an AfterSynthesis hook ordered after the guardrail's own cannot put a secret back", () =>
    Effect.gen(function*() {
      const late: Hook.Hook = {
        name: "late-signature",
        dependsOn: ["redaction"],
        afterSynthesis: (_ctx, text) => Effect.succeed(`${text} (contact ${email})`)
      }
      const agent = yield* agentWith({ plans: [{ steps: [], terminal: true }], synthesis: "hello", hooks: [late] })
      const result = yield* agent.pipeline.process({ request: "hi", requestId: "r3" })
      expect(result._tag === "Completed" && result.response.response).toBe("hello (contact [REDACTED:email])")
      expect(storedText(yield* agent.record("r3"))).not.toContain(email)
    }))

  it.scoped("R4: a rejected plan's model output is redacted in the caller's error and the record", () =>
    Effect.gen(function*() {
      const agent = yield* agentWith({
        // The first answer is re-asked once (planReasks), then refused.
        plans: [`not a plan ${secretA}`, `still not a plan ${secretA}`],
        synthesis: "x"
      })
      const error = yield* Effect.flip(agent.pipeline.process({ request: "plan", requestId: "r4" }))
      expect(error._tag).toBe("PlanningError")
      expect(JSON.stringify(error)).not.toContain(secretA)
      if (error._tag === "PlanningError") {
        expect(error.reason).toBe("invalid_plan")
        expect(error.output).toContain("[REDACTED:openai_key]")
      }
      expect(storedText(yield* agent.record("r4"))).not.toContain(secretA)
    }))

  it.scoped("R6: with rawEvidence the record keeps the exact texts; the client still gets them redacted", () =>
    Effect.gen(function*() {
      const agent = yield* agentWith({
        plans: [{ steps: [], terminal: true }],
        synthesis: `key ${secretA}`,
        redaction: { rawEvidence: true }
      })
      const result = yield* agent.pipeline.process({ request: "key?", requestId: "r6" })
      expect(result._tag === "Completed" && result.response.response).toBe("key [REDACTED:openai_key]")
      const record = yield* agent.record("r6")
      expect(record.rawDraft).toBe(`key ${secretA}`)
    }))
})

describe("redaction guardrail: a real SQLite file", () => {
  it.scoped("R5: no byte of the database files holds a secret the request carried, wrote or had a tool return", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "eap-redaction-"))
      const store = SqlStores.layerExecutionStore({}).pipe(
        Layer.provide(SqliteClient.layer({ filename: join(dir, "agent.db") })),
        Layer.orDie
      )
      const agent = yield* agentWith({
        plans: [{ steps: [step("s1", "vault_read", secretA), step("s2", "ticket_lookup", secretB)], terminal: true }],
        synthesis: `answer ${email}`,
        redaction: { allowTools: ["ticket_lookup"] },
        store
      })
      const result = yield* agent.pipeline.process({ request: `use ${secretB}`, requestId: "sqlite-1" })
      expect(result._tag).toBe("Completed")
      const record = yield* agent.record("sqlite-1")
      expect(record.finalResponse).toBe("answer [REDACTED:email]")
      const bytes = readdirSync(dir).map((file) => readFileSync(join(dir, file)).toString("latin1")).join("")
      expect(bytes).toContain("REDACTED:openai_key")
      for (const secret of [secretA, secretB, email]) expect(bytes).not.toContain(secret)
    }))

  it.scoped("R5: a generated id's record, created while the request runs (handed to the SQL store with no fiber of its own), holds no secret", () =>
    Effect.gen(function*() {
      const dir = mkdtempSync(join(tmpdir(), "eap-redaction-"))
      const stores = yield* Layer.build(
        SqlStores.layerExecutionStore({}).pipe(
          Layer.provide(SqliteClient.layer({ filename: join(dir, "agent.db") })),
          Layer.orDie
        )
      )
      const store = Context.get(stores, ExecutionStore.ExecutionStore)
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const hold: Hook.Hook = {
        name: "hold",
        beforePlanning: () => Effect.zipRight(Deferred.succeed(started, undefined), Deferred.await(release))
      }
      const agent = yield* agentWith({
        plans: [{ steps: [], terminal: true }],
        synthesis: "done",
        hooks: [hold],
        store: Layer.succeed(ExecutionStore.ExecutionStore, store)
      })
      const fiber = yield* Effect.fork(agent.pipeline.process({ request: `use ${secretB}` }))
      yield* Deferred.await(started)
      // The create, written while the request waits in its hook.
      const running = (yield* store.list({ status: ["running"] })).records
      expect(running.length).toBe(1)
      expect(running[0]!.request).toBe("use [REDACTED:github_token]")
      const bytes = readdirSync(dir).map((file) => readFileSync(join(dir, file)).toString("latin1")).join("")
      expect(bytes).toContain("REDACTED:github_token")
      expect(bytes).not.toContain(secretB)
      yield* Deferred.succeed(release, undefined)
      expect((yield* Fiber.join(fiber))._tag).toBe("Completed")
    }))
})

describe("redaction guardrail: streamed tokens", () => {
  it.scoped("R7: a secret split across tokens never reaches the client; the delivered text is what it received", () =>
    Effect.gen(function*() {
      const draft = `token ${secretA} and ${email} end`
      const cut = draft.indexOf("sk-") + 5
      const cut2 = draft.indexOf("@") - 2
      const agent = yield* agentWith({
        plans: [{ steps: [], terminal: true }],
        synthesis: draft,
        chunks: [draft.slice(0, cut), draft.slice(cut, cut2), draft.slice(cut2)]
      })
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(agent.pipeline.stream({ request: "stream it", requestId: "r7" }))
      )
      const tokens = events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))
      let shown = ""
      for (const token of tokens) {
        shown += token
        expect(shown).not.toContain("sk-FAKE")
      }
      expect(shown).toBe("token [REDACTED:openai_key] and [REDACTED:email] end")
      const record = yield* agent.record("r7")
      expect(record.deliveredText).toBe(shown)
      expect(storedText(record)).not.toContain(secretA)
    }))
})

describe("redaction guardrail: property over the corpus and random splits", () => {
  /** A draft mixing corpus secrets and ordinary words, cut into random tokens. */
  const arbitrary = fc.record({
    pieces: fc.array(
      fc.oneof(
        fc.constantFrom(...corpus.secrets.map((s) => s.text)),
        fc.constantFrom("the", "order", "café", "42", " ")
      ),
      { minLength: 1, maxLength: 8 }
    ),
    toolSecret: fc.constantFrom(...corpus.secrets),
    cuts: fc.array(fc.nat(), { maxLength: 12 })
  })

  it.effect("R8: no corpus secret reaches the client (buffered or streamed) or any stored field, for any split", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(arbitrary, ({ cuts, pieces, toolSecret }) =>
          Effect.runPromise(Effect.scoped(Effect.gen(function*() {
            const draft = pieces.join(" ")
            const at = [
              ...new Set(cuts.map((c) =>
                c % (draft.length + 1)
              ))
            ].sort((a, b) => a - b)
            const chunks = [...at, draft.length].map((end, i, all) => draft.slice(i === 0 ? 0 : all[i - 1], end))
            const secrets = corpus.secrets.filter((s) => draft.includes(s.text) || s.text === toolSecret.text)
            const agent = yield* agentWith({
              plans: [
                { steps: [step("s1", "vault_read", toolSecret.text)], terminal: true },
                { steps: [step("s1", "vault_read", toolSecret.text)], terminal: true }
              ],
              synthesis: draft,
              chunks: chunks.filter((c) => c.length > 0)
            })
            const buffered = yield* agent.pipeline.process({ request: "buffered", requestId: "b" })
            const events = Chunk.toReadonlyArray(
              yield* Stream.runCollect(agent.pipeline.stream({ request: "streamed", requestId: "s" }))
            )
            let shown = ""
            const seen: Array<string> = []
            for (const event of events) {
              if (event._tag === "Token") shown += event.text
              seen.push(shown, JSON.stringify(event))
            }
            seen.push(JSON.stringify(buffered))
            seen.push(storedText(yield* agent.record("b")), storedText(yield* agent.record("s")))
            for (const text of seen) {
              for (const secret of secrets) {
                // As it is, and as JSON text writes it (a PEM key's line breaks escaped).
                expect(text).not.toContain(secret.secret)
                expect(text).not.toContain(JSON.stringify(secret.secret).slice(1, -1))
              }
            }
          })))),
        { numRuns: propertyRuns(200) }
      )
    ))
})

describe("redaction guardrail: configuration", () => {
  it.effect("R9: an unbounded extra pattern fails the agent's Layer as an invalid `redaction` option", () =>
    Effect.gen(function*() {
      const layer = Agent.layerTest({
        script: { plans: [], synthesis: "x" },
        tools,
        redaction: { patterns: [{ name: "ticket", regex: /TICKET-\d+/, maxLength: 20 }] }
      })
      const error = yield* Effect.flip(Effect.scoped(Layer.build(layer)))
      expect(error._tag).toBe("InvalidPipelineOptions")
      if (error._tag === "InvalidPipelineOptions") {
        expect(error.option).toBe("redaction")
        expect(error.detail).toContain("ticket")
      }
    }))

  it.scoped("R10: an agent with a hook registry enforces the guardrail on every registry version", () =>
    Effect.gen(function*() {
      const layer = Agent.layerTest({
        script: { plans: [{ steps: [], terminal: true }, { steps: [], terminal: true }], synthesis: `key ${secretA}` },
        tools,
        registry: true,
        redaction: {}
      })
      const context = yield* Layer.build(layer)
      const pipeline = Context.get(context, Pipeline.Pipeline)
      const registry = Context.get(context, HookRegistry.HookRegistry)
      const first = yield* pipeline.process({ request: "one", requestId: "reg-1" })
      expect(first._tag === "Completed" && first.response.response).toBe("key [REDACTED:openai_key]")
      // A new version (a registered hook that echoes the secret after everything else).
      yield* registry.register("after_synthesis", (_ctx, text) => Effect.succeed(`${text} ${email}`), {
        name: "echo",
        priority: -Number.MAX_VALUE
      })
      const second = yield* pipeline.process({ request: "two", requestId: "reg-2" })
      expect(second._tag === "Completed" && second.response.response).toBe(
        "key [REDACTED:openai_key] [REDACTED:email]"
      )
      const record = Context.get(context, Agent.TestAgent)
      expect(storedText(yield* Effect.orDie(record.record("reg-2")))).not.toContain(email)
    }))
})

describe("redaction guardrail: secrets in JSON text", () => {
  it.effect("R11: a context-bound secret inside JSON text (escaped quotes, as in a recorded plan) is found", () =>
    Effect.gen(function*() {
      const guardrail = yield* Guardrails.redaction()
      const aws = corpus.secrets.find((s) => s.kind === "aws_secret_key")!
      // Once and twice JSON-encoded: the model's plan text, and that text inside a record.
      for (const text of [JSON.stringify({ text: aws.text }), JSON.stringify(JSON.stringify({ text: aws.text }))]) {
        expect(guardrail.redactor.redact(text).text).not.toContain(aws.secret)
      }
    }))
})
