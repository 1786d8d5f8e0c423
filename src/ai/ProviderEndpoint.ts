/**
 * Where a provider's server is and which key it takes, from configuration:
 * `OPENAI_BASE_URL` / `OPENAI_API_KEY` and `ANTHROPIC_BASE_URL` /
 * `ANTHROPIC_API_KEY`. Its own module so that `ModelConfig` (which loads a
 * provider on demand) and the providers (which read their endpoint) do not
 * import each other.
 *
 * @since 0.1.0
 */
import { Config, ConfigError, Either, Option, Redacted } from "effect"

/**
 * The hosted OpenAI API, used when `OPENAI_BASE_URL` is not set.
 *
 * @since 0.1.0
 * @category constants
 */
export const openAiDefaultUrl = "https://api.openai.com/v1"
/**
 * The hosted Anthropic API, used when `ANTHROPIC_BASE_URL` is not set.
 *
 * @since 0.1.0
 * @category constants
 */
export const anthropicDefaultUrl = "https://api.anthropic.com"

/**
 * A provider's server and key.
 *
 * @since 0.1.0
 * @category models
 */
export interface Endpoint {
  readonly apiUrl: string
  readonly apiKey: Redacted.Redacted | undefined
}

const baseUrl = (variable: string, fallback: string): Config.Config<string> =>
  Config.string(variable).pipe(
    Config.withDefault(fallback),
    Config.mapOrFail((value) => {
      let url: URL
      try {
        url = new URL(value)
      } catch {
        // Never echoed (its scheme neither): a mistyped value may hold a credential.
        return Either.left(ConfigError.InvalidData([variable], `${variable} must be an http(s) URL`))
      }
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return Either.left(ConfigError.InvalidData([variable], `${variable} must be an http(s) URL`))
      }
      // Credentials in the URL would be printed wherever the URL is (errors,
      // spans), and the HTTP client refuses them anyway: keys go in *_API_KEY.
      if (url.username !== "" || url.password !== "") {
        return Either.left(ConfigError.InvalidData(
          [variable],
          `${variable} must not carry credentials (user:password@); put the key in the API key variable`
        ))
      }
      // The clients append `/responses`, `/v1/messages`: no double slash.
      return Either.right(value.replace(/\/+$/, ""))
    })
  )

const endpoint = (urlVariable: string, keyVariable: string, fallback: string): Config.Config<Endpoint> =>
  Config.all({
    apiUrl: baseUrl(urlVariable, fallback),
    apiKey: Config.option(Config.redacted(keyVariable))
  }).pipe(
    Config.mapOrFail(({ apiKey, apiUrl }) => {
      const key = Option.filter(apiKey, (k) => Redacted.value(k).trim().length > 0)
      // The hosted API always wants a key; a local server usually does not.
      if (Option.isNone(key) && apiUrl === fallback) {
        return Either.left(ConfigError.MissingData([keyVariable], `${keyVariable} is required for ${fallback}`))
      }
      return Either.right({ apiUrl, apiKey: Option.getOrUndefined(key) })
    })
  )

/**
 * The OpenAI-compatible server: `OPENAI_BASE_URL`, `OPENAI_API_KEY`.
 *
 * @since 0.1.0
 * @category constants
 */
export const openAi: Config.Config<Endpoint> = endpoint(
  "OPENAI_BASE_URL",
  "OPENAI_API_KEY",
  openAiDefaultUrl
)

/**
 * The Anthropic server: `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`.
 *
 * @since 0.1.0
 * @category constants
 */
export const anthropic: Config.Config<Endpoint> = endpoint(
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_API_KEY",
  anthropicDefaultUrl
)
