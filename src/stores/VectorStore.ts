/**
 * One vector-capable store that episodic memory events, user facts,
 * knowledge fragments and semantic-cache entries are typed facades over
 * (issue 22): items in collections and partitions, exact-match keys (tenant,
 * user, locale, model, tool set), a JSON payload and an optional embedding;
 * cosine search within a partition, newest-first listing, expiry, and
 * deletion by partition, ids or keys — a user can be forgotten.
 *
 * This namespace holds the service (`VectorStore`, its error and call
 * shapes, `stores/contract/VectorStore.ts`) and the bounded in-memory
 * backend (`makeMemory`, `layerMemory`, `stores/memory/VectorStoreMemory.ts`).
 * SQLite (`sqlite-vec` when it loads, brute force otherwise) and PostgreSQL
 * (pgvector when installed, brute force otherwise) are in
 * `effect-agent-pipeline/sqlite` and `effect-agent-pipeline/postgres`. All
 * backends run the same conformance suite.
 *
 * @since 0.1.0
 */
export * from "./contract/VectorStore.js"
export * from "./memory/VectorStoreMemory.js"
