/**
 * README "Defining tools": a tool with a typed failure and a handler that
 * needs a service; the service becomes a requirement of the agent Layer.
 */
// #region readme
import { Tool } from "@effect/ai"
import { Context, Effect, Layer, Schema } from "effect"
import { Agent, ToolRegistry } from "effect-agent-pipeline"

// The tool's name is the capability a plan step calls; the planner reads the
// description and the parameters' JSON Schema.
const StockQuote = Tool.make("stock_quote", {
  description: "Latest stock quote (price) for a ticker symbol",
  parameters: { symbol: Schema.String.pipe(Schema.pattern(/^[A-Z]{1,5}$/)) },
  success: Schema.Struct({ symbol: Schema.String, price: Schema.Number }),
  failure: Schema.Struct({ reason: Schema.String })
})

// A service the handler needs (a market-data client, a database…).
class Quotes extends Context.Tag("app/Quotes")<Quotes, {
  readonly latest: (symbol: string) => Effect.Effect<number, Error>
}>() {}

// Registered under a namespace and an agent: a plan step addresses it as
// market-data / stock-service / stock_quote.
export const stockQuote = ToolRegistry.entry({
  namespace: "market-data",
  agent: "stock-service",
  tool: StockQuote,
  handler: ({ symbol }) =>
    Effect.gen(function*() {
      const quotes = yield* Quotes
      const price = yield* quotes.latest(symbol).pipe(Effect.mapError((e) => ({ reason: e.message })))
      return { symbol, price }
    })
})

export const QuotesLive = Layer.succeed(Quotes, { latest: () => Effect.succeed(123.45) })

// The agent Layer requires what the handlers require.
export const AgentLive = Agent.layerOffline({ tools: [stockQuote] }).pipe(Layer.provide(QuotesLive))
// #endregion readme
