/**
 * Assembling the server: the API's handlers, `/openapi.json`, `/docs`
 * (Scalar from its bundled source, no external fonts), the viewer's
 * assets, the guard middleware, and `NodeHttpServer` on the configured
 * host and port — plus graceful shutdown. Closing the server's Scope:
 *
 * 1. stops accepting connections and starts draining (open SSE streams see
 *    the signal and end with a terminal event; new requests on open
 *    connections get 503 `shutting_down`);
 * 2. waits up to the drain timeout for the requests in flight to finish;
 * 3. interrupts what is left and closes the remaining connections.
 */
import type { RateLimiter as RateLimiterModule } from "@effect/experimental"
import * as RateLimiter from "@effect/experimental/RateLimiter"
import { type HttpApi, HttpApiBuilder, HttpApiScalar, type HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import type { ServeError } from "@effect/platform/HttpServerError"
import { Duration, Effect, FiberSet, Layer, Option, type Redacted } from "effect"
import * as Http from "node:http"
import type { Pipeline } from "../../pipeline/Pipeline.js"
import type { CheckpointStore } from "../../stores/CheckpointStore.js"
import type { ExecutionStore } from "../../stores/contract/ExecutionStore.js"
import { Api, ReadApi } from "./api.js"
import * as Auth from "./auth.js"
import { durable } from "./durableHandlers.js"
import * as Guard from "./guard.js"
import * as Handlers from "./handlers.js"
import * as Shutdown from "./shutdown.js"
import * as ViewerAssets from "./viewerAssets.js"

/** The options with every default applied. */
export interface Resolved {
  readonly port: number
  readonly host: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly rateLimit:
    | {
      readonly limit: number
      readonly window: Duration.DurationInput
      readonly store: Layer.Layer<RateLimiterModule.RateLimiterStore>
    }
    | undefined
  readonly maxBodyBytes: number
  readonly traceUrl: string | undefined
  readonly recordPollInterval: Duration.DurationInput
  readonly drainTimeout: Duration.DurationInput
}

/** The SSE keep-alive comment's period. */
const keepAlive = Duration.seconds(15)

const scalar = HttpApiScalar.layer({ path: "/docs", scalar: { withDefaultFonts: false } })

const make = <R>(
  options: Resolved,
  readOnly: boolean,
  routes: (handlers: Handlers.HandlerOptions) => Layer.Layer<HttpApi.Api, never, R>
): Layer.Layer<HttpServer.HttpServer, ServeError, R> =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const server = Http.createServer()
    const shutdown = yield* Shutdown.make
    const requests = yield* FiberSet.make<unknown, unknown>()
    const rateLimit = options.rateLimit === undefined ? undefined : {
      ...options.rateLimit,
      limiter: yield* Effect.provide(RateLimiter.make, yield* Layer.build(options.rateLimit.store))
    }
    const keyCheck = Option.match(options.apiKey, { onNone: () => undefined, onSome: Auth.make })
    const handlerOptions: Handlers.HandlerOptions = {
      maxBodyBytes: options.maxBodyBytes,
      stream: { pollInterval: options.recordPollInterval, keepAlive, draining: shutdown.draining }
    }
    const app = HttpApiBuilder.serve().pipe(
      Layer.provide([
        HttpApiBuilder.middlewareOpenApi(),
        scalar,
        ViewerAssets.layer({ traceUrl: options.traceUrl, readOnly, authRequired: keyCheck !== undefined }).pipe(
          Layer.provide(HttpApiBuilder.Router.Live)
        ),
        Guard.layer({ keyCheck, rateLimit, maxBodyBytes: options.maxBodyBytes, shutdown, requests })
      ]),
      Layer.provide(routes(handlerOptions))
    )
    const drain = Layer.scopedDiscard(Effect.addFinalizer(() =>
      Effect.gen(function*() {
        server.close()
        yield* shutdown.begin
        // Finalizers run uninterruptibly: the wait must be interruptible for the timeout to end it.
        const drained = yield* Effect.timeoutOption(
          Effect.interruptible(FiberSet.awaitEmpty(requests)),
          options.drainTimeout
        )
        if (Option.isNone(drained)) {
          const open = yield* FiberSet.size(requests)
          yield* Effect.logWarning(
            `AgentServer: ${open} requests still open after the drain timeout; interrupting them`
          )
        }
        yield* FiberSet.clear(requests)
        server.closeAllConnections()
      })
    ))
    const node = NodeHttpServer.layer(() => server, { port: options.port, host: options.host })
    return Layer.provideMerge(Layer.provide(drain, app), node)
  }))

/** Every route, over an agent. */
export const full = (
  options: Resolved
): Layer.Layer<HttpServer.HttpServer, ServeError, Pipeline | ExecutionStore | CheckpointStore> =>
  make(options, false, (handlers) =>
    HttpApiBuilder.api(Api).pipe(
      Layer.provide([
        Handlers.requests(handlers),
        Handlers.checkpoints(handlers),
        Handlers.pendingCheckpoints,
        Handlers.records(handlers),
        Handlers.openai(handlers),
        durable(handlers)
      ])
    ))

/** The read-only routes, over a store. */
export const readOnly = (
  options: Resolved
): Layer.Layer<HttpServer.HttpServer, ServeError, ExecutionStore | CheckpointStore> =>
  make(
    options,
    true,
    (handlers) =>
      HttpApiBuilder.api(ReadApi).pipe(Layer.provide([Handlers.pendingCheckpoints, Handlers.records(handlers)]))
  )
