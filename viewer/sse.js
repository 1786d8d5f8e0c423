// @ts-check
/**
 * Server-sent events read with `fetch` and a stream reader (so the request
 * can carry an `Authorization` header, which `EventSource` cannot), parsed
 * as the HTML standard says: `event:`, `data:` (several lines join with a
 * newline), `id:`, comments (`:`), an event dispatched at each blank line,
 * lines ended by CRLF, LF or CR — also across chunk boundaries.
 */

/**
 * @typedef {{ readonly event: string, readonly data: string, readonly id: string | undefined }} SseEvent
 */

/**
 * A parser fed text chunks; calls `onEvent` for each complete event.
 *
 * @param {(event: SseEvent) => void} onEvent
 * @returns {{ readonly push: (chunk: string) => void, readonly end: () => void }}
 */
export const sseParser = (onEvent) => {
  let buffer = ""
  /** @type {string} */
  let event = ""
  /** @type {Array<string>} */
  let data = []
  /** @type {string | undefined} */
  let id = undefined
  let hasData = false

  const dispatch = () => {
    if (hasData) onEvent({ event: event === "" ? "message" : event, data: data.join("\n"), id })
    event = ""
    data = []
    hasData = false
  }

  /** @param {string} line */
  const line = (line) => {
    if (line === "") return dispatch()
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    switch (field) {
      case "event":
        event = value
        break
      case "data":
        data.push(value)
        hasData = true
        break
      case "id":
        if (!value.includes("\0")) id = value
        break
    }
  }

  return {
    push: (chunk) => {
      buffer += chunk
      for (;;) {
        const match = /\r\n|\r|\n/.exec(buffer)
        if (match === null) return
        // A CR at the very end may be the first half of a CRLF split across chunks.
        if (match[0] === "\r" && match.index === buffer.length - 1) return
        line(buffer.slice(0, match.index))
        buffer = buffer.slice(match.index + match[0].length)
      }
    },
    end: () => {
      if (buffer.endsWith("\r")) line(buffer.slice(0, -1))
      buffer = ""
    }
  }
}

/**
 * Reads a `text/event-stream` response body to its end (or until `signal`
 * aborts), calling `onEvent` for each event.
 *
 * @param {Response} response
 * @param {(event: SseEvent) => void} onEvent
 * @returns {Promise<void>}
 */
export const readEvents = async (response, onEvent) => {
  if (response.body === null) return
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  const parser = sseParser(onEvent)
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    parser.push(decoder.decode(value, { stream: true }))
  }
  parser.push(decoder.decode())
  parser.end()
}
