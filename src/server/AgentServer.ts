/**
 * Serving an agent over HTTP (issue 21, DESIGN §7): one Layer over whatever
 * agent Layer a user built. JSON and SSE request endpoints, HITL resume, the
 * execution records (and their live events), an OpenAI-compatible
 * `POST /v1/chat/completions`, the OpenAPI document (`/openapi.json`), an
 * API explorer (`/docs`) and the execution viewer (`/`) — with an API key,
 * a per-key rate limit, body size limits and graceful shutdown. Routes,
 * bodies, errors and settings: `docs/server.md`.
 *
 * @since 0.1.0
 */
import * as RateLimiter from "@effect/experimental/RateLimiter"
import type { HttpServer } from "@effect/platform"
import type { ServeError } from "@effect/platform/HttpServerError"
import { Config, type ConfigError, Duration, Effect, Layer, Option, type Redacted } from "effect"
import { mebibyte } from "../domain/PipelineRequest.js"
import type { Services } from "../pipeline/Agent.js"
import type { CheckpointStore } from "../stores/contract/CheckpointStore.js"
import type { ExecutionStore } from "../stores/contract/ExecutionStore.js"
import * as ServerApi from "./internal/api.js"
import * as Serve from "./internal/serve.js"
import * as ServerConfig from "./internal/serverConfig.js"

/**
 * The errors the server answers with, one class per status, and how
 * library errors map to them.
 *
 * @example
 * ```ts
 * import { PipelineError } from "effect-agent-pipeline"
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * const error = AgentServer.ApiError.fromPipelineError(
 *   new PipelineError.InvalidRequest({ reason: "malformed", path: "request", detail: "must be a non-empty string" })
 * )
 * error._tag // "BadRequest"
 * error.error // { type: "invalid_request_error", code: "malformed", message: "…", param: "request" }
 * ```
 *
 * @since 0.1.0
 * @category errors
 */
export * as ApiError from "./ApiError.js"

/**
 * The server's `HttpApi`: every route with its Schemas, for
 * `HttpApiClient.make(AgentServer.Api)` or your own OpenAPI tooling.
 *
 * @example
 * ```ts
 * import { HttpApiClient } from "@effect/platform"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { Effect } from "effect"
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * const latest = Effect.gen(function*() {
 *   const client = yield* HttpApiClient.make(AgentServer.Api, { baseUrl: "http://127.0.0.1:4111" })
 *   return yield* client.records.list({ urlParams: { limit: "10" } })
 * }).pipe(Effect.provide(NodeHttpClient.layerUndici))
 * ```
 *
 * @since 0.1.0
 * @category api
 */
export const Api: typeof ServerApi.Api = ServerApi.Api

/**
 * The rate limit: at most `limit` requests per `window` for each key (or
 * remote address, without a valid key), counted in `store` —
 * `RateLimiter.layerStoreMemory` (one process) unless given; for several
 * processes, a shared store such as
 * `@effect/experimental/RateLimiter/Redis`'s `layerStore`.
 *
 * @example
 * ```ts
 * import * as RateLimiterRedis from "@effect/experimental/RateLimiter/Redis"
 * import type * as AgentServer from "effect-agent-pipeline/server"
 *
 * // 100 requests a minute per key, counted in a Redis every server shares.
 * const shared: AgentServer.RateLimit = {
 *   limit: 100,
 *   window: "1 minute",
 *   store: RateLimiterRedis.layerStore({ host: "127.0.0.1", port: 6379 })
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface RateLimit {
  readonly limit: number
  readonly window: Duration.DurationInput
  readonly store?: Layer.Layer<RateLimiter.RateLimiterStore> | undefined
}

/**
 * The server's settings, all optional (defaults in parentheses):
 *
 * - `port` (4111) and `host` (`127.0.0.1`: loopback unless configured);
 * - `apiKey`: required on every route but the viewer's page and assets,
 *   as `Authorization: Bearer <key>` or `x-api-key` (none);
 * - `rateLimit`: a {@link RateLimit}, or `false` for none (600 per minute);
 * - `maxBodyBytes`: the largest request body (2 MiB + 64 KiB: the
 *   library's request and metadata limits and room for the JSON around
 *   them);
 * - `readOnly`: serve only the record routes (the viewer over a store);
 * - `traceUrl`: the viewer's trace link template, with `{traceId}`;
 * - `recordPollInterval`: how often record event streams poll the store
 *   (250 ms);
 * - `drainTimeout`: how long shutdown waits for open requests and streams
 *   before interrupting them (10 s).
 *
 * @example
 * ```ts
 * import { Redacted } from "effect"
 * import type * as AgentServer from "effect-agent-pipeline/server"
 *
 * const options: AgentServer.Options = {
 *   host: "0.0.0.0",
 *   port: 8080,
 *   apiKey: Redacted.make("a long random key"),
 *   traceUrl: "http://localhost:16686/trace/{traceId}"
 * }
 * ```
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly port?: number | undefined
  readonly host?: string | undefined
  readonly apiKey?: Redacted.Redacted<string> | undefined
  readonly rateLimit?: RateLimit | false | undefined
  readonly maxBodyBytes?: number | undefined
  readonly readOnly?: boolean | undefined
  readonly traceUrl?: string | undefined
  readonly recordPollInterval?: Duration.DurationInput | undefined
  readonly drainTimeout?: Duration.DurationInput | undefined
}

/**
 * The defaults of {@link Options}.
 *
 * @example
 * ```ts
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * AgentServer.defaults.port // 4111
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  port: 4111,
  host: "127.0.0.1",
  rateLimit: { limit: 600, window: Duration.minutes(1) },
  maxBodyBytes: 2 * mebibyte + 64 * 1024,
  recordPollInterval: Duration.millis(250),
  drainTimeout: Duration.seconds(10)
} as const

const apiKeyFromEnv = Config.option(Config.redacted("AGENT_API_KEY"))

const resolve = (options: Options): Effect.Effect<Serve.Resolved> =>
  Effect.map(
    options.apiKey === undefined ? Effect.orDie(apiKeyFromEnv) : Effect.succeed(Option.some(options.apiKey)),
    (apiKey): Serve.Resolved => ({
      port: options.port ?? defaults.port,
      host: options.host ?? defaults.host,
      apiKey,
      rateLimit: options.rateLimit === false ? undefined : {
        limit: options.rateLimit?.limit ?? defaults.rateLimit.limit,
        window: options.rateLimit?.window ?? defaults.rateLimit.window,
        store: options.rateLimit?.store ?? RateLimiter.layerStoreMemory
      },
      maxBodyBytes: options.maxBodyBytes ?? defaults.maxBodyBytes,
      traceUrl: options.traceUrl,
      recordPollInterval: options.recordPollInterval ?? defaults.recordPollInterval,
      drainTimeout: options.drainTimeout ?? defaults.drainTimeout
    })
  )

/**
 * Serves an agent on `NodeHttpServer`: provide it with the agent's Layer
 * (`Agent.layer`, `Agent.layerConfig`, …) and launch it. The server lives
 * as long as the Layer; closing it drains open streams (up to
 * `drainTimeout`). It provides the `HttpServer` (its address, e.g. for
 * `HttpServer.logAddress`). With `readOnly: true` it serves only the read
 * routes and needs only the stores (see {@link layerViewer}).
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { Agent, OfflineModel } from "effect-agent-pipeline"
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * const AgentLive = Agent.layer({ model: OfflineModel.layer, tools: [] })
 *
 * AgentServer.layer({ port: 4111 }).pipe(Layer.provide(AgentLive), Layer.launch, NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export function layer(
  options: Options & { readonly readOnly: true }
): Layer.Layer<HttpServer.HttpServer, ServeError, ExecutionStore | CheckpointStore>
export function layer(options?: Options): Layer.Layer<HttpServer.HttpServer, ServeError, Services>
export function layer(options: Options = {}): Layer.Layer<HttpServer.HttpServer, ServeError, Services> {
  return Layer.unwrapEffect(
    Effect.map(
      resolve(options),
      (resolved) => options.readOnly === true ? Serve.readOnly(resolved) : Serve.full(resolved)
    )
  )
}

/**
 * The viewer over a store: only the read routes (`GET /v1/records…`,
 * `GET /v1/checkpoints/{id}`), the OpenAPI document, `/docs` and the
 * viewer's page — no request, resume or chat routes (404). Needs only the
 * stores.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { CheckpointStore, ExecutionStore } from "effect-agent-pipeline"
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * AgentServer.layerViewer({ port: 4111 }).pipe(
 *   Layer.provide([ExecutionStore.layerMemory(), CheckpointStore.layerMemory]),
 *   Layer.launch,
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerViewer = (
  options: Omit<Options, "readOnly"> = {}
): Layer.Layer<HttpServer.HttpServer, ServeError, ExecutionStore | CheckpointStore> =>
  Layer.unwrapEffect(Effect.map(resolve(options), Serve.readOnly))

/**
 * {@link layer} with its settings read from configuration, each overridden
 * by `options`: `AGENT_SERVER_PORT`, `AGENT_SERVER_HOST`, `AGENT_API_KEY`,
 * `AGENT_RATE_LIMIT` (requests per window; `0` turns the limit off),
 * `AGENT_RATE_LIMIT_WINDOW` (e.g. `1 minute`), `AGENT_RATE_LIMIT_REDIS_URL`
 * (count in a shared Redis), `AGENT_SERVER_MAX_BODY_BYTES`,
 * `AGENT_SERVER_READ_ONLY`, `AGENT_TRACE_URL`,
 * `AGENT_SERVER_RECORD_POLL_INTERVAL`, `AGENT_SERVER_DRAIN_TIMEOUT`.
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { Agent } from "effect-agent-pipeline"
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * // AGENT_SERVER_PORT=8080 AGENT_API_KEY=… node server.js
 * AgentServer.layerConfig().pipe(Layer.provide(Agent.layerConfig({ tools: [] })), Layer.launch, NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig = (
  options: Options = {}
): Layer.Layer<HttpServer.HttpServer, ServeError | ConfigError.ConfigError, Services> =>
  Layer.unwrapEffect(Effect.map(ServerConfig.options, (configured) => layer(ServerConfig.merge(configured, options))))

/**
 * {@link layerViewer} with its settings read from configuration, as in
 * {@link layerConfig} (`AGENT_SERVER_READ_ONLY` aside: always read-only).
 *
 * @example
 * ```ts
 * import { NodeRuntime } from "@effect/platform-node"
 * import { Layer } from "effect"
 * import { CheckpointStore, ExecutionStore } from "effect-agent-pipeline"
 * import * as AgentServer from "effect-agent-pipeline/server"
 *
 * AgentServer.layerViewerConfig().pipe(
 *   Layer.provide([ExecutionStore.layerMemory(), CheckpointStore.layerMemory]),
 *   Layer.launch,
 *   NodeRuntime.runMain
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layerViewerConfig = (
  options: Omit<Options, "readOnly"> = {}
): Layer.Layer<HttpServer.HttpServer, ServeError | ConfigError.ConfigError, ExecutionStore | CheckpointStore> =>
  Layer.unwrapEffect(
    Effect.map(ServerConfig.options, (configured) => layerViewer(ServerConfig.merge(configured, options)))
  )
