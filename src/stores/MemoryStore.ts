/**
 * The memory seam (seed 002 memory hooks): where an agent's long-term
 * memory lives, by scope (a user, a tenant, a thread). Hooks and agents use
 * it through `Memory.load` / `Memory.store`, which run each access as one
 * run of the `memory_load` / `memory_store` operation (guards, transforms,
 * observers).
 *
 * This namespace holds the service (`stores/contract/MemoryStore.ts`) and
 * the in-memory backend (`makeMemory`, `layerMemory`,
 * `stores/memory/MemoryStoreMemory.ts`), which keeps records in process;
 * durable backends follow with the SQL stores.
 *
 * @since 0.1.0
 */
export * from "./contract/MemoryStore.js"
export * from "./memory/MemoryStoreMemory.js"
