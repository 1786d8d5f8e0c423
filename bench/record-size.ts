/**
 * What a record of `../shared/bench-peers`' scenario holds, on the heap and
 * as its stored body (issue 20): one tool call, two model calls recorded in
 * full (each prompt carries the 1 KiB enrichment), an enrichment hook, a
 * redaction hook and 16 no-op hook units — as stage hooks (2 + 3H runs) and
 * as operation hooks (2 + 5H runs, bench-peers' default).
 *
 * Heap: requests run through `Agent.layer` into a memory store that keeps
 * them all; the heap grown over N requests, after forced collections,
 * divided by N (minus what the same requests leave behind with a store of
 * one record). Bytes: the stored body of one record (what every store
 * writes), part by part, against the record's plain JSON. Time: encoding a
 * record (what a write costs) and decoding it (what `get` costs).
 *
 *   node --expose-gc --import tsx bench/record-size.ts
 *
 * Not a test: heap figures move by a few percent between runs.
 */
import { Either, ManagedRuntime } from "effect"
import v8 from "node:v8"
import { bodyText, decodeBody } from "../src/domain/internal/recordBody.js"
import { fromCompactTrusted } from "../src/domain/internal/recordCompactDecode.js"
import { encodeDirect } from "../src/domain/internal/recordEncode.js"
import { Agent, type ExecutionRecord, ExecutionStore, Pipeline } from "../src/index.js"
import * as Scenario from "./peersScenario.js"

const N = Number(process.env.BENCH_RECORDS ?? 2000)
const gc = (globalThis as { gc?: () => void }).gc
if (gc === undefined) throw new Error("run with node --expose-gc")

const runtimeOf = async (kind: "stages" | "operations", maxRecords: number) => {
  const runtime = ManagedRuntime.make(Agent.layer({
    model: Scenario.model,
    tools: Scenario.tools,
    hooks: Scenario.hooksOf(16, kind),
    executionStore: ExecutionStore.layerMemory({ maxRecords, maxBytes: 16 * 2 ** 30 })
  }))
  const pipeline = await runtime.runPromise(Pipeline.Pipeline)
  const store = await runtime.runPromise(ExecutionStore.ExecutionStore)
  const run = () => runtime.runPromise(pipeline.process({ request: Scenario.REQUEST }))
  return { runtime, store, run }
}

const heapPerRequest = async (kind: "stages" | "operations", maxRecords: number) => {
  const { run, runtime, store } = await runtimeOf(kind, maxRecords)
  for (let i = 0; i < 300; i++) await run()
  gc()
  gc()
  const before = v8.getHeapStatistics().used_heap_size
  for (let i = 0; i < N; i++) await run()
  await new Promise((resolve) => setTimeout(resolve, 20))
  gc()
  gc()
  const after = v8.getHeapStatistics().used_heap_size
  const page = await runtime.runPromise(store.list({ limit: 1 }))
  await runtime.dispose()
  return { bytes: (after - before) / N, record: page.records[0]! }
}

const timeOf = (f: () => unknown) => {
  let best = Infinity
  for (let round = 0; round < 20; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < 500; i++) f()
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e3 / 500)
  }
  return best
}

const parts = (record: ExecutionRecord.ExecutionRecord) => {
  const body: Record<string, unknown> = JSON.parse(bodyText(record))
  return Object.entries(body).map(([key, value]) => `${key} ${JSON.stringify(value).length}`).join(", ")
}

const main = async () => {
  console.log(`records of bench-peers' scenario at H=16 (${N} requests per row; heap after forced collections)\n`)
  console.log(
    "| hook units | runs | heap per stored record | left by a request (store of 1) | stored body | plain JSON | encode µs | get µs |"
  )
  console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
  for (const kind of ["stages", "operations"] as const) {
    const kept = await heapPerRequest(kind, 1_000_000)
    const left = await heapPerRequest(kind, 1)
    const record = kept.record
    const text = bodyText(record)
    const encode = timeOf(() => bodyText({ ...record }))
    const get = timeOf(() => fromCompactTrusted(JSON.parse(text)))
    if (Either.isLeft(decodeBody(JSON.parse(text)))) throw new Error("the body does not decode")
    console.log(
      `| ${kind} | ${record.hookInvocations.length} | ${kept.bytes.toFixed(0)} B | ${left.bytes.toFixed(0)} B | ${
        Buffer.byteLength(text)
      } B | ${Buffer.byteLength(JSON.stringify(encodeDirect(record)))} B | ${encode.toFixed(1)} | ${get.toFixed(1)} |`
    )
    console.log(`  body parts (${kind}): ${parts(record)}`)
  }
}

main()
