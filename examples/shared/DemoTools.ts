/**
 * Harmless mock tools shared by the examples and the tests: a stock quote, a
 * trade (never a real one), a weather forecast and a currency converter.
 * Results are deterministic functions of the parameters.
 */
import { Tool } from "@effect/ai"
import { Effect, Schema } from "effect"
import { ToolRegistry } from "effect-agent-pipeline"

export const NAMESPACE = "demo-tools"

const hash = (text: string): number => {
  let h = 7
  for (const c of text) h = (h * 31 + (c.codePointAt(0) ?? 0)) % 100_003
  return h
}

export const StockQuote = Tool.make("stock_quote", {
  description: "Latest stock quote (price) for a ticker symbol",
  parameters: { symbol: Schema.String.pipe(Schema.pattern(/^[A-Z]{1,5}$/)) },
  success: Schema.Struct({ symbol: Schema.String, price: Schema.Number, currency: Schema.String })
})

export const ExecuteTrade = Tool.make("execute_trade", {
  description: "Submit a buy or sell trade order for shares of a stock (mock: never trades)",
  parameters: {
    symbol: Schema.String,
    quantity: Schema.Number,
    side: Schema.Literal("buy", "sell")
  },
  success: Schema.Struct({ orderId: Schema.String, status: Schema.String })
})

export const WeatherForecast = Tool.make("weather_forecast", {
  description: "Weather forecast (temperature, conditions) for a city",
  parameters: { city: Schema.String },
  success: Schema.Struct({ city: Schema.String, temperatureC: Schema.Number, conditions: Schema.String })
})

export const ConvertCurrency = Tool.make("convert_currency", {
  description: "Convert an amount of money between currencies (exchange rate)",
  parameters: {
    amount: Schema.Number,
    from: Schema.Literal("USD", "EUR", "GBP"),
    to: Schema.Literal("USD", "EUR", "GBP")
  },
  success: Schema.Struct({ amount: Schema.Number, currency: Schema.String })
})

const RATES = { USD: 1, EUR: 0.92, GBP: 0.79 } as const

export const stockQuote = ToolRegistry.entry({
  namespace: NAMESPACE,
  agent: "stock-service",
  tool: StockQuote,
  handler: ({ symbol }) => Effect.succeed({ symbol, price: 50 + (hash(symbol) % 45_000) / 100, currency: "USD" })
})

export const executeTrade = ToolRegistry.entry({
  namespace: NAMESPACE,
  agent: "trading-service",
  tool: ExecuteTrade,
  handler: ({ quantity, side, symbol }) =>
    Effect.succeed({ orderId: `mock-${side}-${symbol}-${quantity}`, status: "accepted (mock)" })
})

export const weatherForecast = ToolRegistry.entry({
  namespace: NAMESPACE,
  agent: "weather-service",
  tool: WeatherForecast,
  handler: ({ city }) =>
    Effect.succeed({
      city,
      temperatureC: (hash(city) % 35) - 5,
      conditions: ["sunny", "cloudy", "rainy", "windy"][hash(city) % 4] ?? "sunny"
    })
})

export const convertCurrency = ToolRegistry.entry({
  namespace: NAMESPACE,
  agent: "fx-service",
  tool: ConvertCurrency,
  handler: ({ amount, from, to }) =>
    Effect.succeed({ amount: Math.round((amount / RATES[from]) * RATES[to] * 100) / 100, currency: to })
})

export const allTools = [stockQuote, executeTrade, weatherForecast, convertCurrency]
