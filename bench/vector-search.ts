/**
 * Vector store lookups at scale (issue 22: "lookups stay under a stated
 * latency at 100,000 entries on SQLite"). Writes 100,000 items of 256 (or
 * `BENCH_VECTOR_DIMS`) random unit-vector dimensions into a SQLite file
 * (WAL) twice — spread over 100 partitions of 1,000 (how memory and the
 * cache partition by user or tenant), and all in one partition (the worst
 * case) — then times 200 (or `BENCH_VECTOR_LOOKUPS`) searches (k = 5) of
 * each layout with `sqlite-vec` and with the extension forced off (brute
 * force over the same file).
 *
 * Prints the insert rate (one `put` per item, each its own commit, as a
 * write-through does) and the median / p95 lookup latency. Not a test.
 *
 *   tsx bench/vector-search.ts
 *   BENCH_VECTOR_ITEMS=20000 tsx bench/vector-search.ts   # a quicker run
 *   BENCH_VECTOR_DIMS=512 BENCH_VECTOR_LOOKUPS=50 tsx bench/vector-search.ts   # the semantic cache's shape
 */
import { Effect, Layer, ManagedRuntime } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Sqlite from "../src/stores/sql/Sqlite.js"
import { VectorStore } from "../src/stores/VectorStore.js"
import { quantile } from "./support.js"

const ITEMS = Number(process.env.BENCH_VECTOR_ITEMS ?? 100_000)
const DIMS = Number(process.env.BENCH_VECTOR_DIMS ?? 256)
const LOOKUPS = Number(process.env.BENCH_VECTOR_LOOKUPS ?? 200)
const K = 5
const PARTITIONS = 100

/** A deterministic generator (mulberry32), so every run measures the same vectors. */
const random = (() => {
  let state = 0x9e3779b9
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()

const unitVector = (): Array<number> => {
  const v = Array.from({ length: DIMS }, () => random() * 2 - 1)
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
  return v.map((x) => x / norm)
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-vector-bench-"))
const filename = path.join(dir, "vectors.db")

const runtimeOf = (vectorSearch: "extension" | "bruteForce") =>
  ManagedRuntime.make(Layer.orDie(Sqlite.layerVectorStore({ filename, vectorSearch })))

const insert = async (collection: string, partitionOf: (i: number) => string) => {
  const runtime = runtimeOf("extension")
  const started = performance.now()
  await runtime.runPromise(
    Effect.flatMap(VectorStore, (store) =>
      Effect.forEach(
        Array.from({ length: ITEMS }, (_, i) => i),
        (i) =>
          store.put({
            collection,
            id: `item-${i}`,
            partition: partitionOf(i),
            keys: { tenant: "acme", model: "m1" },
            text: `entry ${i}`,
            payload: { response: `answer ${i}` },
            embedding: unitVector()
          }),
        { discard: true }
      ))
  )
  const seconds = (performance.now() - started) / 1000
  await runtime.dispose()
  return ITEMS / seconds
}

const lookups = async (
  vectorSearch: "extension" | "bruteForce",
  collection: string,
  partition: () => string
) => {
  const runtime = runtimeOf(vectorSearch)
  const mode = await runtime.runPromise(Effect.flatMap(VectorStore, (store) => store.mode))
  const times: Array<number> = []
  for (let i = 0; i < LOOKUPS + 10; i++) {
    const query = { collection, partition: partition(), vector: unitVector(), limit: K, keys: { tenant: "acme" } }
    const started = performance.now()
    const hits = await runtime.runPromise(Effect.flatMap(VectorStore, (store) => store.search(query)))
    if (hits.length !== K) throw new Error(`expected ${K} hits, got ${hits.length}`)
    // The first lookups warm the statement cache and the page cache.
    if (i >= 10) times.push(performance.now() - started)
  }
  await runtime.dispose()
  times.sort((a, b) => a - b)
  return { mode, median: quantile(times, 0.5), p95: quantile(times, 0.95) }
}

const main = async () => {
  console.log(
    `vector search: ${ITEMS.toLocaleString("en")} items × ${DIMS} dims, SQLite file (WAL), k=${K}, ${LOOKUPS} lookups`
  )
  const spreadRate = await insert("spread", (i) => `p${i % PARTITIONS}`)
  const singleRate = await insert("single", () => "all")
  console.log(
    `insert (one put per item, each committed): ${Math.round(spreadRate)}/s (100 partitions), ${
      Math.round(singleRate)
    }/s (one partition)`
  )
  console.log(`file size: ${(fs.statSync(filename).size / 1e6).toFixed(1)} MB`)
  for (const vectorSearch of ["extension", "bruteForce"] as const) {
    const one = await lookups(vectorSearch, "spread", () => `p${Math.floor(random() * PARTITIONS)}`)
    const all = await lookups(vectorSearch, "single", () => "all")
    console.log(
      `${one.mode.padEnd(12)} one partition of ${ITEMS / PARTITIONS}: median ${one.median.toFixed(2)} ms, p95 ${
        one.p95.toFixed(2)
      } ms | all ${ITEMS.toLocaleString("en")} in one partition: median ${all.median.toFixed(1)} ms, p95 ${
        all.p95.toFixed(1)
      } ms`
    )
  }
  fs.rmSync(dir, { recursive: true, force: true })
}

main().catch((error) => {
  fs.rmSync(dir, { recursive: true, force: true })
  console.error(error)
  process.exitCode = 1
})
