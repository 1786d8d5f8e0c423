/**
 * Activity signals (seed 000 §10, C18): which agent works on what right now,
 * per domain, so agents running side by side can coordinate. A signal lives
 * until its TTL runs out unless it is renewed; `listActive` returns only
 * unexpired signals.
 *
 * Two services, the store pattern: `ActivityStore` is what hooks use — it
 * reads the `Clock`, validates, and turns TTLs into absolute expiry times;
 * a backend implements the small `ActivitySignalStore`, which is handed
 * those times explicitly. So every backend follows the same clock
 * (`TestClock` in tests) — Redis too, whose own clock is real time.
 *
 * This namespace holds both services (`stores/contract/ActivityStore.ts`)
 * and the in-memory backend (`layerMemory`, `layerStoreMemory`,
 * `stores/memory/ActivityStoreMemory.ts`). SQL (SQLite, PostgreSQL) is in
 * `effect-agent-pipeline/sqlite` and `/postgres` (`layerActivityStore`);
 * Redis in `effect-agent-pipeline/redis`. All run the same conformance
 * suite.
 *
 * @since 0.1.0
 */
export * from "./contract/ActivityStore.js"
export * from "./memory/ActivityStoreMemory.js"
