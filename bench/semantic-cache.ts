/**
 * Semantic cache lookups at scale (issue 22: "lookups stay under a stated
 * latency at 100,000 entries on SQLite"). Fills one partition with 100,000
 * cache entries (512-dim random unit vectors, the shape the cache writes:
 * the `semantic_cache` collection, the global partition, the default
 * `locale` key) on SQLite (a file, WAL) and on the memory store, then times
 * the cache's lookup hook — dimension resolution, search (k = 5, minScore
 * 0.82, the salient-token guard), entry decode — with an embedding model that returns a prepared
 * vector (the embedding call itself is not measured: a real model's is
 * milliseconds to hundreds of milliseconds on its own). Half the queries
 * are a stored vector plus noise (hits), half fresh random vectors (misses).
 *
 * Prints a table of median / p95 lookup latency per store. Not a test.
 *
 *   npx tsx bench/semantic-cache.ts
 *   BENCH_CACHE_ENTRIES=20000 npx tsx bench/semantic-cache.ts   # a quicker run
 *   BENCH_CACHE_LOOKUPS=100 npx tsx bench/semantic-cache.ts     # more samples (sqlite-vec; memory twice, brute force a third)
 */
import { EmbeddingModel } from "@effect/ai"
import { SqlClient } from "@effect/sql/SqlClient"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RequestId } from "../src/domain/PipelineContext.js"
import { encodeEntry, entryIdFor } from "../src/hooks/internal/semanticCacheEntry.js"
import * as SemanticCache from "../src/hooks/SemanticCache.js"
import { defaultGate } from "../src/pipeline/ShortCircuit.js"
import * as Sqlite from "../src/stores/sql/Sqlite.js"
import * as SqlStores from "../src/stores/sql/SqlStores.js"
import { layerMemory, VectorStore } from "../src/stores/VectorStore.js"
import { quantile } from "./support.js"

const ENTRIES = Number(process.env.BENCH_CACHE_ENTRIES ?? 100_000)
const DIMS = 512
const BATCH = 5_000
const WARMUP = 3
// Few lookups where each scans the whole partition, so the run stays under two minutes.
const LOOKUPS_SQLITE_VEC = Number(process.env.BENCH_CACHE_LOOKUPS ?? 20)
const LOOKUPS_BRUTE_FORCE = Math.max(2, Math.round(LOOKUPS_SQLITE_VEC / 3))
const LOOKUPS_MEMORY = LOOKUPS_SQLITE_VEC * 2

/** A deterministic generator (mulberry32), so every run measures the same vectors. */
const random = (() => {
  let state = 0x2545f491
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()

const normalize = (v: Array<number>): Array<number> => {
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
  return v.map((x) => x / norm)
}
const unitVector = (): Array<number> => normalize(Array.from({ length: DIMS }, () => random() * 2 - 1))

// The scope the cache gives a request without a tenant and with the default locale.
const partition = "global"
const keys = { locale: "en", vary: "locale" }
const stored: Array<{ readonly request: string; readonly embedding: Array<number> }> = []
const entryOf = (i: number) => {
  const request = `request ${i}`
  const embedding = unitVector()
  if (i % 97 === 0) stored.push({ request, embedding })
  return {
    collection: SemanticCache.defaultCollection,
    id: entryIdFor(partition, keys, request),
    partition,
    keys,
    text: request,
    payload: encodeEntry({ response: `answer ${i}`, cacheVary: {} }),
    embedding,
    expiresAt: Date.now() + 3_600_000
  }
}

/** The query vectors, by request text: the bench's "embedding model". */
const queries = new Map<string, Array<number>>()
const Prepared = Layer.effect(
  EmbeddingModel.EmbeddingModel,
  EmbeddingModel.make({
    embedMany: (inputs) => Effect.succeed(inputs.map((input, index) => ({ index, embeddings: queries.get(input)! })))
  })
)

const fill = (transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, unknown, R>) =>
  Effect.flatMap(VectorStore, (store) =>
    Effect.forEach(
      Array.from({ length: ENTRIES / BATCH }, (_, b) => b),
      (b) =>
        transaction(Effect.forEach(Array.from({ length: BATCH }, (_, i) => entryOf(b * BATCH + i)), store.put, {
          discard: true
        })),
      { discard: true }
    ))

const measure = async (
  label: string,
  runtime: ManagedRuntime.ManagedRuntime<VectorStore | EmbeddingModel.EmbeddingModel, never>,
  lookups: number
) => {
  const mode = await runtime.runPromise(Effect.flatMap(VectorStore, (store) => store.mode))
  const cache = await runtime.runPromise(SemanticCache.make())
  const times: Array<number> = []
  let hits = 0
  for (let i = 0; i < lookups + WARMUP; i++) {
    // A hit asks what a stored entry was written for (so the salient-token guard lets it through).
    const near = stored[i % stored.length]!
    const request = i % 2 === 0 ? near.request : `query ${label} ${i}`
    queries.set(
      request,
      i % 2 === 0 ? normalize(near.embedding.map((x) => x + (random() - 0.5) * 0.01)) : unitVector()
    )
    const context = { requestId: Schema.decodeSync(RequestId)(`q-${i}`), request, metadata: {}, enrichments: {} }
    const started = performance.now()
    const result = await runtime.runPromise(cache.lookup.beforePlanning!(context, defaultGate))
    const elapsed = performance.now() - started
    if (i >= WARMUP) {
      times.push(elapsed)
      if (result?.decision !== undefined) hits++
    }
  }
  times.sort((a, b) => a - b)
  return { label, mode, lookups, hits, median: quantile(times, 0.5), p95: quantile(times, 0.95) }
}

const main = async () => {
  const began = performance.now()
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "eap-cache-bench-"))
  const filename = path.join(dir, "cache.db")
  try {
    console.log(`semantic cache lookup: ${ENTRIES.toLocaleString("en")} entries × ${DIMS} dims in one partition`)
    const rows: Array<Awaited<ReturnType<typeof measure>>> = []

    let started = performance.now()
    const writer = ManagedRuntime.make(
      SqlStores.layerVectorStore({ vectorSearch: "extension" }).pipe(
        Layer.provideMerge(Sqlite.layerClient(filename)),
        Layer.orDie
      )
    )
    await writer.runPromise(Effect.flatMap(SqlClient, (sql) => fill(sql.withTransaction)))
    await writer.dispose()
    console.log(`SQLite fill: ${((performance.now() - started) / 1000).toFixed(1)} s (${BATCH} puts per transaction)`)
    for (
      const [vectorSearch, lookups] of [["extension", LOOKUPS_SQLITE_VEC], ["bruteForce", LOOKUPS_BRUTE_FORCE]] as const
    ) {
      const runtime = ManagedRuntime.make(
        Layer.merge(Layer.orDie(Sqlite.layerVectorStore({ filename, vectorSearch })), Prepared)
      )
      rows.push(await measure(`sqlite ${vectorSearch}`, runtime, lookups))
      await runtime.dispose()
    }

    started = performance.now()
    const memory = ManagedRuntime.make(
      Layer.merge(Layer.orDie(layerMemory({ maxItems: ENTRIES, maxBytes: 1024 * 1024 * 1024 })), Prepared)
    )
    stored.length = 0
    await memory.runPromise(fill((effect) => effect))
    console.log(`memory fill: ${((performance.now() - started) / 1000).toFixed(1)} s`)
    rows.push(await measure("memory", memory, LOOKUPS_MEMORY))
    await memory.dispose()

    console.log("")
    console.log("| store | ranking | lookups | hits | median | p95 |")
    console.log("| --- | --- | ---: | ---: | ---: | ---: |")
    for (const row of rows) {
      console.log(
        `| ${row.label.split(" ")[0]} | ${row.mode} | ${row.lookups} | ${row.hits} | ${row.median.toFixed(1)} ms | ${
          row.p95.toFixed(1)
        } ms |`
      )
    }
    console.log(`\n(whole run: ${((performance.now() - began) / 1000).toFixed(0)} s)`)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
