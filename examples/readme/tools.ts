import { Tool } from "@effect/ai"
import { Context, Effect, Layer, Schema } from "effect"
import { ToolRegistry } from "effect-agent-pipeline"

// A tool's name is the capability a plan step calls; the planner reads the
// description and the parameters' JSON Schema.
const StockQuote = Tool.make("stock_quote", {
  description: "Latest stock quote (price) for a ticker symbol",
  parameters: { symbol: Schema.String.pipe(Schema.pattern(/^[A-Z]{1,5}$/)) },
  success: Schema.Struct({ symbol: Schema.String, price: Schema.Number }),
  failure: Schema.Struct({ reason: Schema.String })
})

const ExecuteTrade = Tool.make("execute_trade", {
  description: "Submit a buy or sell trade order for shares of a stock (mock: never trades)",
  parameters: { symbol: Schema.String, quantity: Schema.Number, side: Schema.Literal("buy", "sell") },
  success: Schema.Struct({ orderId: Schema.String, status: Schema.String })
})

const WeatherForecast = Tool.make("weather_forecast", {
  description: "Weather forecast (temperature, conditions) for a city",
  parameters: { city: Schema.String },
  success: Schema.Struct({ city: Schema.String, temperatureC: Schema.Number, conditions: Schema.String })
})

// A service the quote handler needs (a market-data client, a database…).
export class Quotes extends Context.Tag("app/Quotes")<Quotes, {
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

export const executeTrade = ToolRegistry.entry({
  namespace: "market-data",
  agent: "trading-service",
  tool: ExecuteTrade,
  handler: ({ quantity, side, symbol }) =>
    Effect.succeed({ orderId: `mock-${side}-${symbol}-${quantity}`, status: "accepted (mock)" })
})

export const weatherForecast = ToolRegistry.entry({
  namespace: "weather",
  agent: "weather-service",
  tool: WeatherForecast,
  handler: ({ city }) => Effect.succeed({ city, temperatureC: 21, conditions: "sunny" })
})

// A stand-in for a real market-data client. An agent whose tools include
// stockQuote requires Quotes: provide it to the agent's Layer.
export const QuotesLive = Layer.succeed(Quotes, { latest: () => Effect.succeed(123.45) })
