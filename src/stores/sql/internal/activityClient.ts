/**
 * A database client Layer for the activity store: its failure to open is
 * reported as an `ActivityStoreError` (the client Layers report
 * `ExecutionStoreError`, the store they were first written for).
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import { Layer } from "effect"
import { ActivityStoreError } from "../../contract/ActivityStore.js"
import type { ExecutionStoreError } from "../../contract/ExecutionStore.js"

/** `client`, failing with an `ActivityStoreError` instead. */
export const activityClient = <A extends SqlClient>(
  client: Layer.Layer<A, ExecutionStoreError>
): Layer.Layer<A, ActivityStoreError> =>
  Layer.catchAll(
    client,
    (error) => Layer.fail(new ActivityStoreError({ operation: error.operation, detail: error.detail, cause: error }))
  )
