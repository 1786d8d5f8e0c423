/**
 * `effect-agent-pipeline viewer`: the execution viewer over an agent's
 * store, read-only — so after `npm start` a user sees the runs it left. It
 * opens the store named by `--store` (a SQLite file or a `postgres://` URL)
 * or, without it, by the store configuration (`AGENT_STORE`, `SQLITE_PATH`,
 * `DATABASE_URL`; `./data/agent.db` by default), runs no migration and
 * writes nothing, and serves the record routes and the viewer through
 * `AgentServer.layerViewer` on `--host`:`--port` (`127.0.0.1:4111`). The
 * server's other settings come from its configuration (`AGENT_API_KEY`,
 * `AGENT_TRACE_URL`, …).
 *
 * @since 0.1.0
 */
import { Command, Options } from "@effect/cli"
import { HttpServer } from "@effect/platform"
import { Console, Effect, Layer, Option } from "effect"
import * as AgentServer from "../../server/AgentServer.js"
import * as StoreConfig from "../../stores/StoreConfig.js"
import * as ReadOnlyStore from "./ReadOnlyStore.js"

const port = Options.integer("port").pipe(
  Options.withDefault(4111),
  Options.withDescription("The port to listen on (0: any free port)")
)

const host = Options.text("host").pipe(
  Options.withDefault("127.0.0.1"),
  Options.withDescription("The address to listen on (loopback by default)")
)

const store = Options.text("store").pipe(
  Options.optional,
  Options.withDescription(
    "The records to show: a SQLite file or a postgres:// URL (default: AGENT_STORE / SQLITE_PATH / DATABASE_URL, else ./data/agent.db)"
  )
)

const traceUrl = Options.text("trace-url").pipe(
  Options.optional,
  Options.withDescription(
    "A trace link template with {traceId}, e.g. http://localhost:16686/trace/{traceId} (default: AGENT_TRACE_URL)"
  )
)

/** Where the records are: `--store`, else the store configuration. */
const locate = (given: Option.Option<string>) =>
  Option.match(given, {
    onSome: (text) => Effect.succeed(ReadOnlyStore.parse(text)),
    onNone: () => Effect.flatMap(StoreConfig.settings, ReadOnlyStore.fromSettings)
  })

/**
 * The `viewer` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const viewer = Command.make("viewer", { port, host, store, traceUrl }, (options) =>
  Effect.gen(function*() {
    const location = yield* locate(options.store)
    const server = AgentServer.layerViewerConfig({
      port: options.port,
      host: options.host,
      ...Option.match(options.traceUrl, { onNone: () => ({}), onSome: (url) => ({ traceUrl: url }) })
    }).pipe(Layer.provide(ReadOnlyStore.layer(location)))
    const announce = Effect.flatMap(HttpServer.HttpServer, (running) => {
      const address = running.address
      const url = address._tag === "TcpAddress"
        ? `http://${address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname}:${address.port}`
        : `unix:${address.path}`
      return Console.log(`Execution viewer (read-only) at ${url}/ — records from ${ReadOnlyStore.describe(location)}`)
    })
    return yield* Layer.launch(Layer.effectDiscard(announce).pipe(Layer.provide(server)))
  })).pipe(Command.withDescription("Serve the execution viewer over an agent's store, read-only"))
