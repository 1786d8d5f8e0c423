/**
 * Where execution records live. Every backend enforces revision gating: a
 * snapshot whose `record_revision` is not newer than the stored one is
 * refused as `stale`, so concurrent writers — fibers or processes — can
 * never lose the newest data (C15). Normal and error records have separate
 * retention (C16). A record is created once (`create`, atomic on its
 * request id) when its request begins, and a `running` record whose owner's
 * lease ran out is marked `abandoned` by `ExecutionStore.Service.sweepAbandoned`.
 *
 * This namespace holds the service (`ExecutionStore`, its errors and call
 * shapes, `stores/contract/ExecutionStore.ts`) and the bounded in-memory
 * backend (`makeMemory`, `layerMemory`, `stores/memory/ExecutionStoreMemory.ts`).
 * SQLite and PostgreSQL are in `effect-agent-pipeline/sqlite` and
 * `effect-agent-pipeline/postgres`. All backends run the same conformance
 * suite.
 *
 * @since 0.1.0
 */
export * from "./contract/ExecutionStore.js"
export * from "./memory/ExecutionStoreMemory.js"
