/**
 * Server-sent events, as a Chat Completions server streams its answer
 * (`text/event-stream`): the text is cut into lines, `data:` lines are
 * gathered (several make one value, joined by `\n`), and an event is
 * dispatched at a blank line — or when the body ends, so a server that
 * closes without the last blank line (llama.cpp after a mid-stream error)
 * loses nothing. Comments (`: keep-alive`), `event:`, `id:` and `retry:`
 * lines are ignored: Chat Completions events are told apart by their data.
 * The WHATWG rules, reduced to what a client of this API needs.
 */
import { Option, Stream } from "effect"

type Pending = ReadonlyArray<string>

const none = Option.none<string>()

const onLine = (pending: Pending, line: string): readonly [Pending, Option.Option<string>] => {
  if (line === "") return pending.length === 0 ? [pending, none] : [[], Option.some(pending.join("\n"))]
  if (line.startsWith(":")) return [pending, none]
  const colon = line.indexOf(":")
  const field = colon < 0 ? line : line.slice(0, colon)
  if (field !== "data") return [pending, none]
  const value = colon < 0 ? "" : line.slice(colon + 1)
  return [[...pending, value.startsWith(" ") ? value.slice(1) : value], none]
}

/**
 * The `data` of each event of an SSE text stream, in order.
 *
 * @since 0.1.0
 * @category utils
 */
export const eventData = <E, R>(text: Stream.Stream<string, E, R>): Stream.Stream<string, E, R> =>
  text.pipe(
    Stream.splitLines,
    // A last blank line dispatches an event the body ended in.
    Stream.concat(Stream.make("")),
    Stream.mapAccum<Pending, string, Option.Option<string>>([], onLine),
    Stream.filterMap((data) => data)
  )
