/**
 * Where HITL checkpoints wait for a decision. A resume does not take a
 * checkpoint, it *claims* it under a lease: while the claim holds, no other
 * resume gets it; the resume that holds it `complete`s it when it succeeds
 * (the checkpoint is deleted) or `release`s it when it fails, so the
 * checkpoint can be resumed again. A claim whose lease ran out — its owner
 * died, or overran — can be claimed by someone else, and from then on the
 * old owner can neither complete nor release it.
 *
 * A stored checkpoint that does not decode (its row was rewritten, or is
 * corrupt) is never handed out, and never stays claimed: `get` and `claim`
 * fail with `CheckpointDecodeError` (a claim is released first), which a
 * resume reports as `tampered`. The row stays, for forensics.
 *
 * Time comes from the `Clock`. This namespace holds the service
 * (`stores/contract/CheckpointStore.ts`) and the in-memory backend
 * (`makeMemory`, `layerMemory`, `stores/memory/CheckpointStoreMemory.ts`);
 * the SQL backends are in `effect-agent-pipeline/sqlite` and
 * `effect-agent-pipeline/postgres`. Every backend runs the same conformance
 * suite.
 *
 * @since 0.1.0
 */
export * from "./contract/CheckpointStore.js"
export * from "./memory/CheckpointStoreMemory.js"
