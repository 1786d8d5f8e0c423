/**
 * Durable requests (`effect-agent-pipeline/durable`): a request that
 * survives its process dying and spreads over a pool of workers, on
 * `@effect/workflow` and `@effect/cluster` (optional peer dependencies:
 * install them to use this subpath).
 *
 * `DurablePipeline.process` runs the same lifecycle as `Pipeline.process` —
 * the same hooks, tools, records — as a workflow whose activities are the
 * regions that do something: the BeforePlanning hooks, each phase's
 * planning call and AfterPlanning hooks, each tool call, AfterExecution,
 * synthesis with AfterSynthesis. When the process running it dies, a
 * restarted process (one process on SQLite) or another runner (PostgreSQL)
 * replays the request: every completed region returns its stored result
 * without running again, and the region that was in flight runs again — a
 * tool reads the same idempotency key (`ToolCalls.current`) in every
 * attempt, and the record says which regions started again. A human
 * approval is a durable signal bound to the plan's digest
 * (`DurablePipeline.approve`).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Agent, OfflineModel } from "effect-agent-pipeline"
 * import * as DurablePipeline from "effect-agent-pipeline/durable"
 *
 * const program = Effect.gen(function*() {
 *   const durable = yield* DurablePipeline.DurablePipeline
 *   const result = yield* durable.process({ requestId: "order-7", request: "What is the stock quote for ACME?" })
 *   if (result._tag === "Completed") console.log(result.response.response)
 * }).pipe(
 *   Effect.provide(
 *     DurablePipeline.layer().pipe(
 *       Layer.provide(Agent.layer({ model: OfflineModel.layer, tools: [] })),
 *       Layer.provide(DurablePipeline.engineSqlite({ filename: "./data/workflows.db" }))
 *     )
 *   )
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { SqlClient } from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { WorkflowEngine } from "@effect/workflow/WorkflowEngine"
import { Duration, Effect, Layer, Option } from "effect"
import * as PipelineRequest from "../domain/PipelineRequest.js"
import { partsOf } from "../pipeline/internal/pipelineParts.js"
import { redactError } from "../pipeline/internal/redactValues.js"
import { newId } from "../pipeline/internal/requestRecord.js"
import { Pipeline } from "../pipeline/Pipeline.js"
import { makeApprove } from "./internal/durableApproval.js"
import * as Engine from "./internal/durableEngine.js"
import type * as EngineConfig from "./internal/durableEngineConfig.js"
import { makeDurableRequest, makeRequestWorkflow } from "./internal/durableRequest.js"
import * as Retention from "./internal/durableRetention.js"
import { DurablePipeline } from "./internal/durableService.js"

export {
  /**
   * The durable engine could not be configured or started: `invalid_config`
   * (an option out of range), `storage` (the database could not be opened
   * or prepared), `listen` (a runner's socket could not listen).
   *
   * @since 0.1.0
   * @category errors
   */
  DurableEngineError
} from "./internal/durableEngineConfig.js"

export {
  /**
   * Durable requests over the agent's pipeline: `process`, `submit`, `poll`
   * and `approve` (see its namespace).
   *
   * @since 0.1.0
   * @category services
   */
  DurablePipeline
} from "./internal/durableService.js"

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DurableOptions {
  /**
   * The workflow's name (default `effect-agent-pipeline/request`): one per
   * agent sharing an engine. Every runner of a deployment uses the same.
   */
  readonly name?: string | undefined
  /** How long an approval holds its checkpoint's claim while it signals the workflow (default 30 s). */
  readonly approvalClaimLease?: Duration.DurationInput | undefined
}

/** The parts of the agent's pipeline (a pipeline not built by `Pipeline.make` is a wiring defect). */
const pipelineParts = Effect.flatMap(Pipeline, (pipeline) => {
  const parts = partsOf(pipeline)
  return parts === undefined
    ? Effect.dieMessage("DurablePipeline.layer needs a pipeline built by Pipeline.make")
    : Effect.succeed(parts)
})

/**
 * The durable request service over the agent's `Pipeline` and a
 * `WorkflowEngine` ({@link engineSqlite}, {@link enginePostgres}). Building
 * it registers the request workflow with the engine: a process that starts
 * with it resumes the requests it owns that were cut short.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options?: DurableOptions): Layer.Layer<DurablePipeline, never, Pipeline | WorkflowEngine> => {
  const workflow = makeRequestWorkflow(options?.name ?? "effect-agent-pipeline/request")
  const claimLease = Duration.decode(options?.approvalClaimLease ?? Duration.seconds(30))
  const registered = Layer.unwrapEffect(
    Effect.map(pipelineParts, (parts) => workflow.toLayer(makeDurableRequest(parts, workflow).execute))
  )
  const service = Layer.effect(
    DurablePipeline,
    Effect.gen(function*() {
      const parts = yield* pipelineParts
      const engine = yield* Effect.context<WorkflowEngine>()
      const { redact } = parts

      const payloadOf = (input: PipelineRequest.Input) =>
        Effect.map(PipelineRequest.decode(input, parts.limits), (decoded) => ({
          requestId: decoded.requestId ?? newId(),
          request: decoded.request,
          metadata: decoded.metadata
        }))
      const executionOf = (requestId: string) => workflow.executionId({ requestId, request: "", metadata: {} })

      const process: DurablePipeline.Service["process"] = (input) =>
        Effect.flatMap(payloadOf(input), (payload) => workflow.execute(payload)).pipe(
          Effect.mapError((error) => (redact === undefined ? error : redactError(error, redact))),
          Effect.provide(engine)
        )

      const submit: DurablePipeline.Service["submit"] = (input) =>
        Effect.flatMap(
          payloadOf(input),
          (payload) => Effect.as(workflow.execute(payload, { discard: true }), payload.requestId)
        ).pipe(Effect.provide(engine))

      // The engine has a result once the request is suspended or complete;
      // before that, its record says whether it runs.
      const poll: DurablePipeline.Service["poll"] = (requestId) =>
        Effect.flatMap(executionOf(requestId), (id) => workflow.poll(id)).pipe(
          Effect.flatMap((result): Effect.Effect<Option.Option<DurablePipeline.Status>> => {
            if (result !== undefined) {
              return Effect.succeed(Option.some(result._tag === "Complete" ? result : { _tag: "Suspended" }))
            }
            return parts.store.get(requestId).pipe(
              Effect.map(Option.filter((record) => record.mode === "durable")),
              Effect.map(Option.as({ _tag: "Running" } as const)),
              Effect.orElseSucceed(() => Option.none())
            )
          }),
          Effect.provide(engine)
        )

      const approve = makeApprove(parts, workflow, claimLease, engine)

      return DurablePipeline.of({ process, submit, poll, approve })
    })
  )
  return Layer.merge(service, registered)
}

/**
 * Options of {@link engineSqlite}: the file (it may be the stores' own), and
 * the cluster's table prefix (default `eap_cluster`).
 *
 * @since 0.1.0
 * @category models
 */
export type EngineSqliteOptions = Engine.DurableSqliteOptions

/**
 * Options of {@link enginePostgres}: the database, the table prefix every
 * runner of the deployment shares (default `eap_cluster`), this runner's
 * address (`{ host, port }`, reached by the other runners) or `"single"`,
 * and overrides of the tuned failover settings.
 *
 * @since 0.1.0
 * @category models
 */
export type EnginePostgresOptions = Engine.DurablePostgresOptions

/**
 * The failover and polling settings a PostgreSQL deployment is tuned with
 * (shard locks refreshed every second, expiring after 8 s; assignments,
 * runner health and storage polled every second).
 *
 * @since 0.1.0
 * @category models
 */
export type FailoverSettings = EngineConfig.FailoverSettings

/**
 * What an engine Layer provides: the `WorkflowEngine`, the cluster services
 * under it, and its `SqlClient` (the retention job runs over it).
 *
 * @since 0.1.0
 * @category models
 */
export type EngineServices = Engine.DurableEngineServices | SqlClient

/**
 * The engine of one process over a SQLite file: a single runner; a
 * restarted process resumes the requests the last one left. One live
 * process per file.
 *
 * @since 0.1.0
 * @category layers
 */
export const engineSqlite = (
  options: EngineSqliteOptions
): Layer.Layer<EngineServices, EngineConfig.DurableEngineError> => Engine.layerSqlite(options)

/**
 * The engine of one runner of a PostgreSQL deployment: every runner uses the
 * same database and prefix, each its own address; a runner that dies has
 * its requests taken over by the others (about 9 s with the tuned
 * settings). The cluster's tables are created once, under a lock, before
 * the runner starts.
 *
 * @since 0.1.0
 * @category layers
 */
export const enginePostgres = (
  options: EnginePostgresOptions
): Layer.Layer<EngineServices, EngineConfig.DurableEngineError> => Engine.layerPostgres(options)

/**
 * Options of {@link layerRetention}.
 *
 * @since 0.1.0
 * @category models
 */
export type RetentionOptions = Retention.RetentionJobOptions

/**
 * Deletes finished workflow executions older than `olderThan`, at start and
 * then every `every`, batch by batch (suspended and running ones are kept).
 * Runs over the engine's `SqlClient`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRetention = (options: RetentionOptions): Layer.Layer<never, never, SqlClient> =>
  Retention.layerRetention(options)

/**
 * One retention sweep: how many finished executions it deleted.
 *
 * @since 0.1.0
 * @category utils
 */
export const sweepFinished = (
  options: Retention.RetentionOptions
): Effect.Effect<number, SqlError, SqlClient> => Retention.sweepFinished(options)
