/**
 * Memory operations carry a structured query and a record id (issue 22,
 * seed 002 memory hooks, seed 003 operations): `before_memory_load` may
 * change a query's text, limit, minimum score and kinds; `before_memory_store`
 * may set the id a record is stored under; `after_memory_load` sees (and may
 * rewrite) the records whose content becomes prompt context. `Memory.loadWith`
 * / `Memory.storeWith` run any backend's read or write as the operation, and
 * call the backend directly outside a request. Values outside the query's
 * bounds are refused like any wrong shape; hostile ones never crash.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { type ExecutionRecord, Hook, Memory, MemoryStore, type Operation } from "effect-agent-pipeline"
import { at, completed, makeSeamAgent, observerOf, probe, runsOf, type Seen, untyped } from "./OperationsSupport.js"

const FAIL_CLOSED = (reason: ExecutionRecord.HookDecision["reason"]) =>
  ({ policy: "fail_closed", action: "terminate", reason }) as const
const FAIL_OPEN = (reason: ExecutionRecord.HookDecision["reason"]) =>
  ({ policy: "fail_open", action: "continue", reason }) as const

type Loaded = Either.Either<ReadonlyArray<Operation.MemoryRecord>, unknown>

/** A backend body that keeps the query it got and returns `records`. */
const backend =
  (received: Array<Operation.MemoryQuery>, records: ReadonlyArray<Operation.MemoryRecord>) =>
  (query: Operation.MemoryQuery) => Effect.sync(() => (received.push(query), records))

describe("memory_load: a structured query", () => {
  it.scoped("seed 002 / issue 22: a beforeMemoryLoad transform changes limit, minScore and kinds; loadWith's body receives them (recorded, the snapshot unchanged)", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryQuery> = []
      const outcomes: Array<Loaded> = []
      const seen: Array<Seen> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.loadWith("user-1", { query: "eur", limit: 10 }, backend(received, [{ content: "x" }])),
            outcomes
          ),
          Hook.make({
            name: "narrow",
            capabilities: ["query_rewrite"],
            beforeMemoryLoad: (_c, q) =>
              Effect.succeed({ ...q, limit: 3, minScore: 0.5, kinds: ["fact", "preference"] })
          }),
          Hook.make({ name: "watch", around: { memoryLoad: observerOf("watch", seen) } })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-narrow" }))
      expect(received).toEqual([{ query: "eur", limit: 3, minScore: 0.5, kinds: ["fact", "preference"] }])
      expect(outcomes).toEqual([Either.right([{ content: "x" }])])
      // The call snapshot is what the caller asked for.
      expect(runsOf(seen, "memory_load")[0]!.call.payload).toEqual({ scope: "user-1", query: "eur", limit: 10 })
      const record = yield* agent.test.record("mq-narrow")
      expect(at(record, "before_memory_load").map((i) => [i.name, i.operation, i.status, typeof i.contributionHash]))
        .toEqual([["narrow", "memory_load", "completed", "string"]])
      expect(at(record, "around_memory_load").map((i) => [i.name, i.status])).toEqual([["watch", "completed"]])
    }))

  it.scoped("seed 002 / issue 22: the in-memory store honours the rewritten limit, kinds and minScore (Memory.load)", () =>
    Effect.gen(function*() {
      const outcomes: Array<Loaded> = []
      let rewrite: (q: Operation.MemoryQuery) => Operation.MemoryQuery = (q) => q
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.load("user-1", "eur"), outcomes),
          Hook.make({ name: "rewrite", beforeMemoryLoad: (_c, q) => Effect.sync(() => rewrite(q)) })
        ],
        // One request per query below.
        script: { plans: Array.from({ length: 6 }, () => ({ steps: [], terminal: true })), synthesis: "draft answer" }
      })
      yield* agent.memory.store("user-1", { content: "EUR", metadata: { kind: "fact" } }) // score 1
      yield* agent.memory.store("user-1", { content: "prefers EUR", metadata: { kind: "preference" } }) // 1/2
      yield* agent.memory.store("user-1", { content: "EUR account in Lisbon", metadata: { kind: "fact" } }) // 1/4
      yield* agent.memory.store("user-1", { content: "EUR, no kind" }) // 1/3
      const contents = Effect.gen(function*() {
        outcomes.length = 0
        completed(yield* agent.pipeline.process({ request: "hi" }))
        return outcomes.map((o) => Either.map(o, (records) => records.map((r) => r.content)))
      })
      expect(yield* contents).toEqual([
        Either.right(["EUR, no kind", "EUR account in Lisbon", "prefers EUR", "EUR"])
      ])
      rewrite = (q) => ({ ...q, limit: 2 })
      expect(yield* contents).toEqual([Either.right(["EUR, no kind", "EUR account in Lisbon"])])
      rewrite = (q) => ({ ...q, kinds: ["fact"] })
      expect(yield* contents).toEqual([Either.right(["EUR account in Lisbon", "EUR"])])
      rewrite = (q) => ({ ...q, minScore: 0.3 })
      expect(yield* contents).toEqual([Either.right(["EUR, no kind", "prefers EUR", "EUR"])])
      rewrite = (q) => ({ ...q, kinds: ["fact", "preference"], minScore: 0.5, limit: 1 })
      expect(yield* contents).toEqual([Either.right(["prefers EUR"])])
      rewrite = (q) => ({ ...q, kinds: [] })
      expect(yield* contents).toEqual([Either.right([])])
    }))

  it.scoped("seed 002: a query handed back as an equal copy is no rewrite (no capability needed, nothing recorded as a contribution)", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryQuery> = []
      const outcomes: Array<Loaded> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.loadWith(
              "user-1",
              { query: "eur", limit: 4, minScore: 0.1, kinds: ["fact"] },
              backend(received, [])
            ),
            outcomes
          ),
          Hook.make({
            name: "copy",
            capabilities: [],
            beforeMemoryLoad: (_c, q) => Effect.succeed({ ...q, kinds: [...(q.kinds ?? [])], minScore: q.minScore })
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-copy" }))
      expect(received).toEqual([{ query: "eur", limit: 4, minScore: 0.1, kinds: ["fact"] }])
      const record = yield* agent.test.record("mq-copy")
      expect(at(record, "before_memory_load").map((i) => [i.status, i.contributionHash])).toEqual([
        ["completed", undefined]
      ])
    }))

  it.scoped("seed 001/002: changing only the limit is a query rewrite: refused without query_rewrite", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryQuery> = []
      const outcomes: Array<Loaded> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.loadWith("user-1", { query: "eur", limit: 4 }, backend(received, [])), outcomes),
          Hook.make({
            name: "more",
            capabilities: ["memory_rewrite"],
            failure: "fail_open",
            beforeMemoryLoad: (_c, q) => Effect.succeed({ ...q, limit: 100 })
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-undeclared" }))
      // Refused, fail open: the body gets the caller's query.
      expect(received).toEqual([{ query: "eur", limit: 4 }])
      const record = yield* agent.test.record("mq-undeclared")
      expect(at(record, "before_memory_load")).toEqual([
        expect.objectContaining({
          status: "failed",
          decision: FAIL_OPEN("undeclared_contribution"),
          error: expect.stringContaining("\"query_rewrite\"")
        })
      ])
    }))

  const invalid: ReadonlyArray<readonly [string, (q: Operation.MemoryQuery) => unknown]> = [
    ["limit 0", (q) => ({ ...q, limit: 0 })],
    ["limit 1001", (q) => ({ ...q, limit: 1001 })],
    ["a fractional limit", (q) => ({ ...q, limit: 2.5 })],
    ["a limit that is a string", (q) => ({ ...q, limit: "5" })],
    ["minScore 2", (q) => ({ ...q, minScore: 2 })],
    ["minScore NaN", (q) => ({ ...q, minScore: Number.NaN })],
    ["kinds [\"\"]", (q) => ({ ...q, kinds: [""] })],
    ["a kind of 65 characters", (q) => ({ ...q, kinds: ["k".repeat(65)] })],
    ["33 kinds", (q) => ({ ...q, kinds: Array.from({ length: 33 }, (_, i) => `k${i}`) })],
    ["kinds that are a string", (q) => ({ ...q, kinds: "fact" })],
    ["a query that is not a string", (q) => ({ ...q, query: 42 })],
    ["a bare string (the old shape)", (q) => q.query],
    ["null", () => null],
    ["an array", () => []]
  ]

  it.scoped("seed 002 / issue 22: an invalid memory query is refused as a wrong shape (fail closed: HookFailed, the body never runs)", () =>
    Effect.gen(function*() {
      for (const [label, bad] of invalid) {
        const received: Array<Operation.MemoryQuery> = []
        const outcomes: Array<Loaded> = []
        const agent = yield* makeSeamAgent({
          hooks: [
            probe(Memory.loadWith("user-1", { query: "eur", limit: 5 }, backend(received, [])), outcomes),
            untyped({
              name: "bad",
              beforeMemoryLoad: (_c: unknown, q: Operation.MemoryQuery) => Effect.succeed(bad(q))
            })
          ]
        })
        completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-bad" }))
        expect(received, label).toEqual([])
        const [outcome] = outcomes
        expect(Either.isLeft(outcome!) && outcome.left, label).toMatchObject({
          _tag: "HookFailed",
          hookName: "bad",
          point: "before_memory_load",
          reason: "wrong_shape"
        })
        const record = yield* agent.test.record("mq-bad")
        expect(at(record, "before_memory_load").map((i) => [i.status, i.decision]), label).toEqual([
          ["failed", FAIL_CLOSED("hook_error")]
        ])
      }
    }))

  it.scoped("seed 002 / issue 22: an invalid memory query from a fail-open hook is skipped: the chain goes on with the query it was given", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryQuery> = []
      const outcomes: Array<Loaded> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.loadWith("user-1", { query: "eur", limit: 5 }, backend(received, [])), outcomes),
          Hook.make({
            name: "zero",
            failure: "fail_open",
            beforeMemoryLoad: (_c, q) => Effect.succeed({ ...q, limit: 0 })
          }),
          Hook.make({ name: "kinds", beforeMemoryLoad: (_c, q) => Effect.succeed({ ...q, kinds: ["fact"] }) })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-open" }))
      expect(received).toEqual([{ query: "eur", limit: 5, kinds: ["fact"] }])
      const record = yield* agent.test.record("mq-open")
      expect(at(record, "before_memory_load").map((i) => [i.name, i.status, i.decision?.reason])).toEqual([
        ["zero", "failed", "hook_error"],
        ["kinds", "completed", undefined]
      ])
    }))

  it.scoped("seed 002: a hostile memory query (a throwing getter, a Proxy whose reads throw, a revoked Proxy) is refused, never a crash", () =>
    Effect.gen(function*() {
      const hostile: ReadonlyArray<readonly [string, () => unknown]> = [
        ["a throwing getter", () =>
          Object.defineProperty({ query: "eur" }, "limit", {
            enumerable: true,
            get: () => {
              throw new Error("getter exploded")
            }
          })],
        ["a Proxy whose reads throw", () =>
          new Proxy({ query: "eur", limit: 5 }, {
            get() {
              throw new Error("trap exploded")
            }
          })],
        ["a revoked Proxy", () => {
          const r = Proxy.revocable({}, {})
          r.revoke()
          return r.proxy
        }],
        ["kinds as a Proxy whose reads throw", () => ({
          query: "eur",
          limit: 5,
          kinds: new Proxy(["fact"], {
            get() {
              throw new Error("kinds exploded")
            }
          })
        })]
      ]
      for (const [label, value] of hostile) {
        const received: Array<Operation.MemoryQuery> = []
        const outcomes: Array<Loaded> = []
        const agent = yield* makeSeamAgent({
          hooks: [
            probe(Memory.loadWith("user-1", { query: "eur", limit: 5 }, backend(received, [])), outcomes),
            untyped({ name: "hostile", beforeMemoryLoad: () => Effect.sync(value) })
          ]
        })
        completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-hostile" }))
        expect(received, label).toEqual([])
        const [outcome] = outcomes
        expect(Either.isLeft(outcome!) && outcome.left, label).toMatchObject({
          _tag: "HookFailed",
          point: "before_memory_load",
          reason: "invalid_result"
        })
      }
    }))

  it.scoped("seed 002: a memory query is read once: a getter that changes its answer after the check cannot pass the body a refused value", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryQuery> = []
      const outcomes: Array<Loaded> = []
      let reads = 0
      const shifty = Object.defineProperty({ query: "eur" }, "limit", {
        enumerable: true,
        get: () => (++reads === 1 ? 3 : 1_000_000)
      })
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.loadWith("user-1", { query: "eur", limit: 5 }, backend(received, [])), outcomes),
          untyped({ name: "shifty", beforeMemoryLoad: () => Effect.succeed(shifty) })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi" }))
      expect(received).toEqual([{ query: "eur", limit: 3 }])
      expect(reads).toBe(1)
    }))

  it.scoped("seed 002 / issue 22: afterMemoryLoad rewriting the records changes what loadWith returns (the prompt context)", () =>
    Effect.gen(function*() {
      const outcomes: Array<Loaded> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.loadWith(
              "user-1",
              { query: "", limit: 5 },
              backend([], [{ id: "f1", content: "- currency: EUR" }, { id: "f2", content: "- iban: PT50 0000" }])
            ),
            outcomes
          ),
          Hook.make({
            name: "redact",
            afterMemoryLoad: (_c, records) =>
              Effect.succeed(records.map((r) => ({ ...r, content: r.content.replace(/PT\d\d[\d ]+/, "[iban]") })))
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "mq-after" }))
      expect(outcomes).toEqual([
        Either.right([{ id: "f1", content: "- currency: EUR" }, { id: "f2", content: "- iban: [iban]" }])
      ])
      const record = yield* agent.test.record("mq-after")
      expect(at(record, "after_memory_load").map((i) => [i.name, typeof i.contributionHash])).toEqual([
        ["redact", "string"]
      ])
    }))

  it.effect("seed 002 / issue 22: outside a request loadWith calls the body directly with the caller's query", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryQuery> = []
      const query: Operation.MemoryQuery = { query: "eur", limit: 5000, kinds: [""] }
      const records = yield* Memory.loadWith("user-1", query, backend(received, [{ content: "x" }]))
      expect(records).toEqual([{ content: "x" }])
      expect(received).toHaveLength(1)
      expect(received[0]).toBe(query)
    }))

  it.scoped("seed 003: a loadWith body that needs a service gets it inside a request", () =>
    Effect.gen(function*() {
      const outcomes: Array<Loaded> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.loadWith("user-1", { query: "eur", limit: 2 }, (q) =>
              Effect.flatMap(MemoryStore.MemoryStore, (store) =>
                store.load("user-1", q))),
            outcomes
          ),
          Hook.make({
            name: "watch",
            around: {
              memoryLoad: () =>
                Effect.void
            }
          })
        ]
      })
      yield* agent.memory.store("user-1", { content: "prefers EUR" })
      completed(yield* agent.pipeline.process({ request: "hi" }))
      expect(outcomes).toEqual([Either.right([{ id: "mem-1", content: "prefers EUR" }])])
    }))
})

describe("memory_store: a record id", () => {
  it.scoped("seed 002 / issue 22: a beforeMemoryStore transform sets an id; storeWith's body receives it and afterMemoryStore sees the stored id", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryRecord> = []
      const ids: Array<string> = []
      const outcomes: Array<Either.Either<string, unknown>> = []
      const seen: Array<Seen> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.storeWith(
              "user-1",
              { content: "prefers EUR", metadata: { kind: "preference" } },
              (record) => Effect.sync(() => (received.push(record), record.id ?? "generated"))
            ),
            outcomes
          ),
          Hook.make({
            name: "key",
            capabilities: ["memory_rewrite"],
            beforeMemoryStore: (_c, record) => Effect.succeed({ ...record, id: "pref:currency" })
          }),
          Hook.make({ name: "audit", afterMemoryStore: (_c, id) => Effect.sync(() => (ids.push(id), id)) }),
          Hook.make({ name: "watch", around: { memoryStore: observerOf("watch", seen) } })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi", requestId: "ms-id" }))
      expect(received).toEqual([{ id: "pref:currency", content: "prefers EUR", metadata: { kind: "preference" } }])
      expect(outcomes).toEqual([Either.right("pref:currency")])
      expect(ids).toEqual(["pref:currency"])
      expect(runsOf(seen, "memory_store")[0]!.call.payload.record).toEqual({
        content: "prefers EUR",
        metadata: { kind: "preference" }
      })
      const record = yield* agent.test.record("ms-id")
      expect(at(record, "before_memory_store").map((i) => [i.name, i.status, typeof i.contributionHash])).toEqual([
        ["key", "completed", "string"]
      ])
      expect(at(record, "after_memory_store").map((i) => [i.name, i.status])).toEqual([["audit", "completed"]])
    }))

  it.scoped("seed 002 / issue 22: Memory.store under an id a hook sets replaces the record stored under it", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<string, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(Memory.store("user-1", { content: "prefers EUR" }), outcomes),
          Hook.make({ name: "key", beforeMemoryStore: (_c, record) => Effect.succeed({ ...record, id: "currency" }) })
        ]
      })
      yield* agent.memory.store("user-1", { id: "currency", content: "prefers USD" })
      yield* agent.memory.store("user-1", { content: "lives in Lisbon" })
      completed(yield* agent.pipeline.process({ request: "hi" }))
      expect(outcomes).toEqual([Either.right("currency")])
      expect(yield* agent.memory.load("user-1", { query: "", limit: 10 })).toEqual([
        { id: "currency", content: "prefers EUR" },
        { id: "mem-1", content: "lives in Lisbon" }
      ])
    }))

  it.scoped("seed 001/002: setting an id is a record rewrite: refused without memory_rewrite (fail closed: nothing stored)", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryRecord> = []
      const outcomes: Array<Either.Either<string, unknown>> = []
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.storeWith(
              "user-1",
              { content: "note" },
              (record) => Effect.sync(() => (received.push(record), "x"))
            ),
            outcomes
          ),
          Hook.make({
            name: "key",
            capabilities: ["query_rewrite"],
            beforeMemoryStore: (_c, record) => Effect.succeed({ ...record, id: "k" })
          })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi" }))
      expect(received).toEqual([])
      const [outcome] = outcomes
      expect(Either.isLeft(outcome!) && outcome.left).toMatchObject({
        _tag: "HookFailed",
        point: "before_memory_store",
        reason: "undeclared_contribution"
      })
    }))

  it.scoped("seed 002 / issue 22: an invalid record id (empty, over 256 characters, not a string) is refused as a wrong shape", () =>
    Effect.gen(function*() {
      for (const id of ["", "i".repeat(257), 42, null]) {
        const received: Array<Operation.MemoryRecord> = []
        const outcomes: Array<Either.Either<string, unknown>> = []
        const agent = yield* makeSeamAgent({
          hooks: [
            probe(
              Memory.storeWith(
                "user-1",
                { content: "note" },
                (record) => Effect.sync(() => (received.push(record), "x"))
              ),
              outcomes
            ),
            untyped({
              name: "bad-id",
              beforeMemoryStore: (_c: unknown, record: Operation.MemoryRecord) => Effect.succeed({ ...record, id })
            })
          ]
        })
        completed(yield* agent.pipeline.process({ request: "hi" }))
        expect(received, String(id)).toEqual([])
        const [outcome] = outcomes
        expect(Either.isLeft(outcome!) && outcome.left, String(id)).toMatchObject({
          _tag: "HookFailed",
          point: "before_memory_store",
          reason: "wrong_shape"
        })
      }
    }))

  it.scoped("seed 002: an id of 256 characters is accepted", () =>
    Effect.gen(function*() {
      const outcomes: Array<Either.Either<string, unknown>> = []
      const id = "i".repeat(256)
      const agent = yield* makeSeamAgent({
        hooks: [
          probe(
            Memory.storeWith("user-1", { content: "note" }, (record) => Effect.succeed(record.id ?? "none")),
            outcomes
          ),
          Hook.make({ name: "key", beforeMemoryStore: (_c, record) => Effect.succeed({ ...record, id }) })
        ]
      })
      completed(yield* agent.pipeline.process({ request: "hi" }))
      expect(outcomes).toEqual([Either.right(id)])
    }))

  it.effect("seed 002 / issue 22: outside a request storeWith calls the body directly with the caller's record", () =>
    Effect.gen(function*() {
      const received: Array<Operation.MemoryRecord> = []
      const mine: Operation.MemoryRecord = { id: "", content: "note" }
      const id = yield* Memory.storeWith("user-1", mine, (record) => Effect.sync(() => (received.push(record), "s-1")))
      expect(id).toBe("s-1")
      expect(received).toHaveLength(1)
      expect(received[0]).toBe(mine)
    }))
})
