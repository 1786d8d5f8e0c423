/**
 * Issue 19 against a real third-party server: `@dwmkerr/mock-llm` (0.1.29),
 * an OpenAI-compatible mock that speaks only Chat Completions, started by
 * the test in a Node process of its own (its stdout, where mock-llm logs
 * every request, discarded) on 127.0.0.1 (port 0), and stopped with the
 * test's Scope. An
 * agent runs on it through `effect-agent-pipeline/openai-compat`: it plans
 * (the mock answers the request that carries `response_format` — matched
 * with its JMESPath `match` — with the plan's JSON as the message content),
 * the pipeline runs the planned tool, and the answer streams (the mock cuts
 * the content into 8-character chunks, sends no usage chunk, ends with
 * `data: [DONE]`). Its error answers are typed errors: a 400 when buffered,
 * a 200 whose only event is `data: {"error": …}` when streamed.
 */
import { LanguageModel } from "@effect/ai"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Chunk, Context, Effect, Exit, Layer, Option, Stream } from "effect"
import { Agent, ExecutionStore, Pipeline } from "effect-agent-pipeline"
import * as OpenAiCompat from "effect-agent-pipeline/openai-compat"
import { type ChildProcess, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { allTools } from "../../../examples/shared/DemoTools.js"
import { wirePlan } from "../../support/FakeChatCompletions.js"
import { quoteStep } from "../../support/Harness.js"

/** mock-llm's configuration (its `src/config.ts`): rules matched by path, method and a JMESPath `match`; the last match wins. */
interface MockLlmConfig {
  readonly streaming: { readonly chunkSize: number; readonly chunkIntervalMs: number }
  readonly rules: ReadonlyArray<{
    readonly path: string
    readonly method?: string
    readonly match?: string
    readonly response: { readonly status: number; readonly content: string }
  }>
}

/**
 * mock-llm's programmatic entry (`dist/server`, CommonJS: `createServer(config, host, port)`, an
 * Express app not yet listening), started in a Node process of its own: mock-llm logs with bare
 * `console.log` — its A2A agents and MCP server at startup, every request's method and path — and
 * has no option or variable to turn that off, so the process's stdout is discarded (its stderr is
 * kept, for a start that fails). The config comes over IPC; the port mock-llm listens on goes back.
 */
const serverModule = createRequire(import.meta.url).resolve("@dwmkerr/mock-llm/dist/server")
const starter = `
const { createServer } = require(process.argv[1])
process.once("message", (config) => {
  const server = createServer(config, "127.0.0.1", 0).listen(0, "127.0.0.1", () => process.send(server.address().port))
})
process.once("disconnect", () => process.exit(0))
`

/** mock-llm on 127.0.0.1, port 0, in a child process for the current Scope; its base URL (`…/v1`). */
const mockLlm = (config: MockLlmConfig) =>
  Effect.acquireRelease(
    Effect.async<{ readonly child: ChildProcess; readonly port: number }, Error>((resume) => {
      const child = spawn(process.execPath, ["-e", starter, serverModule], {
        stdio: ["ignore", "ignore", "pipe", "ipc"]
      })
      let stderr = ""
      child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
      const exited = (code: number | null) =>
        resume(Effect.fail(new Error(`mock-llm exited (${code}) before listening:\n${stderr}`)))
      child.once("exit", exited)
      child.once("message", (port) => {
        child.off("exit", exited)
        resume(Effect.succeed({ child, port: Number(port) }))
      })
      child.send(config)
      // Interrupted while it starts: stop it.
      return Effect.sync(() => child.kill())
    }),
    ({ child }) =>
      Effect.async<void>((resume) => {
        if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
        child.once("exit", () => resume(Effect.void))
        child.kill()
      })
  ).pipe(Effect.map(({ port }) => `http://127.0.0.1:${port}/v1`))

/** A `chat.completion` body template: the model echoed (`{{jmes request body.model}}`), `content` as the message. */
const completion = (content: string) =>
  JSON.stringify({
    id: "chatcmpl-{{timestamp}}",
    object: "chat.completion",
    created: 1760000000,
    model: "{{jmes request body.model}}",
    choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }
  })

const ANSWER = "ACME trades at 123.45 USD, a quote from the stock service."
const PLAN = wirePlan({ steps: [quoteStep("q1")], reasoning: "a quote is needed" })

const config: MockLlmConfig = {
  streaming: { chunkSize: 8, chunkIntervalMs: 1 },
  rules: [
    // Anything else on the path: the answer (synthesis).
    {
      path: "/v1/chat/completions",
      method: "POST",
      match: "@",
      response: { status: 200, content: completion(ANSWER) }
    },
    // Planning asks for structured output.
    {
      path: "/v1/chat/completions",
      method: "POST",
      match: "body.response_format.type == 'json_schema'",
      response: { status: 200, content: completion(JSON.stringify(PLAN)) }
    },
    {
      path: "/v1/chat/completions",
      method: "POST",
      match: "contains(body.messages[-1].content, 'error-400')",
      response: {
        status: 400,
        content: JSON.stringify({ error: { message: "bad", type: "invalid_request_error", param: null, code: null } })
      }
    }
  ]
}

const model = (apiUrl: string) => OpenAiCompat.layer({ model: "mock-model", apiUrl })

describe("mock-llm (a real Chat Completions server)", () => {
  it.scopedLive("an agent plans by json_schema, the pipeline runs the tool, the answer streams in the mock's chunks", () =>
    Effect.gen(function*() {
      const apiUrl = yield* mockLlm(config)
      const context = yield* Layer.build(Agent.layer({ model: model(apiUrl), tools: allTools }))
      const pipeline = Context.get(context, Pipeline.Pipeline)
      const events = Chunk.toReadonlyArray(
        yield* Stream.runCollect(pipeline.stream({ request: "What is the stock quote for ACME?", requestId: "m-1" }))
      )

      const tokens = events.flatMap((e) => (e._tag === "Token" ? [e.text] : []))
      expect(tokens.join("")).toBe(ANSWER)
      expect(tokens.length).toBe(Math.ceil(ANSWER.length / 8))
      const last = events.at(-1)
      expect(last?._tag).toBe("Completed")
      if (last?._tag !== "Completed") return
      expect(last.response.response).toBe(ANSWER)
      const [phase] = last.response.phases
      expect(phase?.plan.reasoning).toBe("a quote is needed")
      expect(phase?.steps.map((s) => [s.step_id, s.capability, s.status])).toEqual([["q1", "stock_quote", "succeeded"]])
      expect(phase?.steps[0]?.output).toMatchObject({ symbol: "ACME" })

      // Planning's usage came with the buffered answer; the stream sent no usage chunk and still finished.
      const record = yield* Effect.orDie(Context.get(context, ExecutionStore.ExecutionStore).get("m-1"))
      const calls = Option.getOrThrow(record).modelCalls ?? []
      expect(calls.map((c) => [c.purpose, c.outcome, c.usage])).toEqual([
        ["planning", "succeeded", { inputTokens: 5, outputTokens: 3, totalTokens: 8 }],
        ["synthesis", "succeeded", undefined]
      ])
      expect(calls[1]?.modelId).toBe("mock-model")
    }))

  it.scopedLive("its error answers are typed: a 400 when buffered, a 200 carrying data: {\"error\": …} when streamed", () =>
    Effect.gen(function*() {
      const apiUrl = yield* mockLlm(config)
      const languageModel = Context.get(yield* Layer.build(model(apiUrl)), LanguageModel.LanguageModel)
      const buffered = yield* Effect.flip(languageModel.generateText({ prompt: "please error-400" }))
      expect(buffered._tag === "HttpResponseError" && [buffered.response.status, buffered.reason]).toEqual([
        400,
        "StatusCode"
      ])
      expect(buffered.message).toContain("bad")
      const streamed = yield* Effect.exit(Stream.runDrain(languageModel.streamText({ prompt: "please error-400" })))
      const error = Exit.isFailure(streamed) ? Option.getOrUndefined(Cause.failureOption(streamed.cause)) : undefined
      expect(error?._tag).toBe("HttpResponseError")
      expect(error?._tag === "HttpResponseError" && error.response.status).toBe(200)
      expect(error?.message).toContain("bad (invalid_request_error)")
    }))
})
