/**
 * `POST /v1/chat/completions` through the official `openai` client (issue
 * 21): buffered, streamed with and without `include_usage`, the
 * conversation's earlier turns reaching the pipeline as its history, a
 * suspended request, and errors read by the client as `APIError` with our
 * status and message — before a stream and inside one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Option } from "effect"
import { Hook } from "effect-agent-pipeline"
import OpenAI from "openai"
import { agentLayer, quoteStep, serve, serveMounted, tradeStep } from "./support/StreamServer.js"

const tokens = ["The ", "price ", "is ", "42."]
const prompts: Array<string> = []

const planFor = (prompt: string): unknown => {
  prompts.push(prompt)
  return prompt.includes("buy ACME")
    ? { steps: [tradeStep("t1")], terminal: true }
    : prompt.includes("unplannable")
    ? "not a plan"
    : { steps: [quoteStep("q1")], terminal: true }
}

const agent = agentLayer({
  script: { plan: planFor, tokens: () => tokens, usage: { inputTokens: 11, outputTokens: 4 } }
})

const client = (url: string) => new OpenAI({ baseURL: `${url}/v1`, apiKey: "test-key", maxRetries: 0 })

const collect = async <A>(iterable: AsyncIterable<A>): Promise<Array<A>> => {
  const out: Array<A> = []
  for await (const item of iterable) out.push(item)
  return out
}

const idOf = (completionId: string) => completionId.replace(/^chatcmpl-/, "")

describe("POST /v1/chat/completions with the openai client", () => {
  it.live("buffered: one chat.completion, model echoed, usage from the record's model calls", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent)
      const completion = yield* Effect.promise(() =>
        client(server.url).chat.completions.create({
          model: "my-agent",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "hello" },
            { role: "assistant", content: "Hi! What do you need?" },
            { role: "user", content: [{ type: "text", text: "quote " }, { type: "text", text: "ACME" }] }
          ],
          user: "u-42",
          temperature: 0.2,
          max_tokens: 100,
          n: 1
        })
      )
      expect(completion.object).toBe("chat.completion")
      expect(completion.model).toBe("my-agent")
      expect(completion.id).toMatch(/^chatcmpl-[0-9a-f-]{36}$/)
      expect(completion.choices).toHaveLength(1)
      expect(completion.choices[0]?.finish_reason).toBe("stop")
      expect(completion.choices[0]?.message).toMatchObject({ role: "assistant", content: tokens.join("") })
      // Two model calls (plan, synthesis), each reporting 11 in, 4 out.
      expect(completion.usage).toEqual({ prompt_tokens: 22, completion_tokens: 8, total_tokens: 30 })
      const record = Option.getOrThrow(yield* Effect.orDie(server.store.get(idOf(completion.id))))
      expect(record.request).toBe("quote ACME")
      expect(record.metadata).toMatchObject({
        user_id: "u-42",
        conversation_turns: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "hello" },
          { role: "assistant", content: "Hi! What do you need?" }
        ]
      })
      // The earlier turns reached the planner as the conversation history.
      expect(prompts.at(-1)).toContain("assistant: Hi! What do you need?")
    }).pipe(Effect.scoped))

  it.live("stream: a role chunk, content deltas, a final chunk with finish_reason, [DONE]", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent)
      const stream = yield* Effect.promise(() =>
        client(server.url).chat.completions.create({
          model: "my-agent",
          messages: [{ role: "user", content: "quote ACME" }],
          stream: true
        })
      )
      const chunks = yield* Effect.promise(() => collect(stream))
      expect(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "my-agent")).toBe(true)
      expect(new Set(chunks.map((c) => c.id)).size).toBe(1)
      expect(chunks[0]?.choices[0]?.delta.role).toBe("assistant")
      const text = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")
      expect(text).toBe(tokens.join(""))
      expect(chunks.map((c) => c.choices[0]?.finish_reason ?? null).filter((r) => r !== null)).toEqual(["stop"])
      expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe("stop")
      expect(chunks.some((c) => c.usage !== undefined && c.usage !== null)).toBe(false)
    }).pipe(Effect.scoped))

  it.live("stream with include_usage: a last chunk without choices carries the usage", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent)
      const stream = yield* Effect.promise(() =>
        client(server.url).chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "quote ACME" }],
          stream: true,
          stream_options: { include_usage: true }
        })
      )
      const chunks = yield* Effect.promise(() => collect(stream))
      const last = chunks.at(-1)
      expect(last?.choices).toEqual([])
      expect(last?.usage).toEqual({ prompt_tokens: 22, completion_tokens: 8, total_tokens: 30 })
      expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true)
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(tokens.join(""))
    }).pipe(Effect.scoped))

  it.live("a hook that changes the answer after streaming: the final chunk carries the final text", () =>
    Effect.gen(function*() {
      const server = yield* serve(agentLayer({
        script: { plan: planFor, tokens: () => tokens },
        hooks: [Hook.make({ name: "sign", afterSynthesis: (_c, t) => Effect.succeed(`${t} (checked)`) })]
      }))
      const response = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "quote" }], stream: true })
        }).then((r) => r.text())
      )
      const frames = response.split("\n\n").filter((f) => f.startsWith("data: ")).map((f) => f.slice(6))
      expect(frames.at(-1)).toBe("[DONE]")
      const final = JSON.parse(frames.at(-2) ?? "") as { agent: { status: string; response?: string } }
      expect(final.agent).toMatchObject({ status: "completed", response: "The price is 42. (checked)" })
    }).pipe(Effect.scoped))

  it.live("keep-alive comments in a silent stream do not disturb the client", () =>
    Effect.gen(function*() {
      const release = yield* Deferred.make<void>()
      // AgentServer's keep-alive period is 15 s: the function on a bare router, with 100 ms.
      const server = yield* serveMounted(
        agentLayer({ script: { plan: planFor, tokens: () => tokens, beforeToken: () => Deferred.await(release) } }),
        { keepAlive: Duration.millis(100) }
      )
      yield* Effect.fork(Effect.delay(Deferred.succeed(release, undefined), Duration.millis(450)))
      const raw = yield* Effect.promise(() =>
        fetch(`${server.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "quote" }], stream: true })
        }).then((r) => r.text())
      )
      expect(raw.split("\n\n").filter((f) => f === ": keep-alive").length).toBeGreaterThanOrEqual(2)
      const release2 = yield* Deferred.make<void>()
      const again = yield* serveMounted(
        agentLayer({ script: { plan: planFor, tokens: () => tokens, beforeToken: () => Deferred.await(release2) } }),
        { keepAlive: Duration.millis(100) }
      )
      yield* Effect.fork(Effect.delay(Deferred.succeed(release2, undefined), Duration.millis(450)))
      const stream = yield* Effect.promise(() =>
        client(again.url).chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "quote" }],
          stream: true
        })
      )
      const chunks = yield* Effect.promise(() => collect(stream))
      expect(chunks.map((c) => c.choices[0]?.delta.content ?? "").join("")).toBe(tokens.join(""))
    }).pipe(Effect.scoped))

  it.live("a suspended request: content names the checkpoint; the agent extension carries it and the digest", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent)
      const completion = yield* Effect.promise(() =>
        client(server.url).chat.completions.create({ model: "m", messages: [{ role: "user", content: "buy ACME" }] })
      )
      const extension =
        (completion as unknown as { agent: { status: string; checkpointId: string; planDigest: string } })
          .agent
      expect(extension.status).toBe("suspended")
      expect(extension.planDigest).toMatch(/\S/)
      expect(completion.choices[0]?.message.content).toContain(extension.checkpointId)
      expect(completion.choices[0]?.finish_reason).toBe("stop")
    }).pipe(Effect.scoped))

  it.live("errors: the client raises APIError with our status and message, before a stream and inside one", () =>
    Effect.gen(function*() {
      const server = yield* serve(agent)
      const openai = client(server.url)
      const noUser = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "m", messages: [{ role: "system", content: "only a system turn" }] })
          .then(() => undefined, (e: unknown) => e)
      )
      expect(noUser).toBeInstanceOf(OpenAI.APIError)
      expect((noUser as InstanceType<typeof OpenAI.APIError>).status).toBe(400)
      expect((noUser as InstanceType<typeof OpenAI.APIError>).message).toContain("messages must contain a user message")
      expect((noUser as InstanceType<typeof OpenAI.APIError>).code).toBe("malformed")

      const refused = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "m", messages: [{ role: "user", content: "unplannable" }] })
          .then(() => undefined, (e: unknown) => e)
      )
      expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(422)
      expect((refused as InstanceType<typeof OpenAI.APIError>).type).toBe("server_error")

      const n2 = yield* Effect.promise(() =>
        openai.chat.completions.create({ model: "m", n: 2, messages: [{ role: "user", content: "x" }] })
          .then(() => undefined, (e: unknown) => e)
      )
      expect((n2 as InstanceType<typeof OpenAI.APIError>).status).toBe(400)

      const inStream = yield* Effect.promise(async () => {
        const stream = await openai.chat.completions.create({
          model: "m",
          messages: [{ role: "user", content: "unplannable" }],
          stream: true
        })
        try {
          for await (const _ of stream) void _
          return undefined
        } catch (e) {
          return e
        }
      })
      expect(inStream).toBeInstanceOf(OpenAI.APIError)
      expect((inStream as InstanceType<typeof OpenAI.APIError>).message).toMatch(/plan/i)
    }).pipe(Effect.scoped))
})
