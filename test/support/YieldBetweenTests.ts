/**
 * Vitest setup (`setupFiles` in vitest.config.ts): the event loop turns after
 * every test.
 *
 * A worker reports its progress to vitest over RPC and times out a reply it
 * has not read within 60 s (vitest 3's fixed limit). A file of synchronous
 * tests (a `FastCheck` property over `Schema`s, say) never lets the loop read
 * those replies: 60 s of them in a row — easy on a loaded 2-core machine —
 * fail the run with `Timeout calling "onTaskUpdate"` although every test
 * passed. A turn after each test reads them.
 */
import { afterEach } from "vitest"

afterEach(() => new Promise<void>((resolve) => setImmediate(resolve)))
