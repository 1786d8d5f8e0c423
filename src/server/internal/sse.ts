/**
 * Server-sent events framing for the server's streams (issue 21): numbered
 * events (`id: <n>` from 1, `event:`, one `data:` line of JSON), OpenAI's
 * unnamed `data:` frames, and `: keep-alive` comments while nothing else is
 * sent — so proxies and clients that time out idle connections keep a
 * long-running request's stream open.
 *
 * `data` is always `JSON.stringify` output: it escapes every control
 * character (CR and LF included), so a frame's data is one line whatever
 * the values carry, and a client can never see a forged field or event.
 *
 * @since 0.1.0
 */
import { HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Duration, Effect, Exit, Mailbox, Option, Stream } from "effect"

/**
 * How a server stream behaves: how often it polls the store for a record's
 * changes, how long it stays silent before a keep-alive comment, and what
 * tells it the server is shutting down (`draining` completes then).
 *
 * @since 0.1.0
 * @category models
 */
export interface StreamOptions {
  readonly pollInterval: Duration.DurationInput
  readonly keepAlive: Duration.DurationInput
  readonly draining: Effect.Effect<void>
}

/**
 * One named event; `data` is JSON-serializable.
 *
 * @since 0.1.0
 * @category models
 */
export interface SseEvent {
  readonly event: string
  readonly data: unknown
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const event = (name: string, data: unknown): SseEvent => ({ event: name, data })

/**
 * The comment sent while a stream is idle (ignored by every SSE parser).
 *
 * @since 0.1.0
 * @category constants
 */
export const keepAliveFrame = ": keep-alive\n\n"

/**
 * A numbered event's frame. Event names are the server's own constants;
 * one carrying a line break is a programming error.
 *
 * @since 0.1.0
 * @category encoding
 */
export const frame = (id: number, e: SseEvent): string => {
  if (/[\r\n]/.test(e.event)) throw new Error(`SSE event names are one line: ${JSON.stringify(e.event)}`)
  return `id: ${id}\nevent: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`
}

/**
 * An unnamed, unnumbered frame (OpenAI's streaming shape): `data: <text>`.
 * `text` is JSON text or the `[DONE]` sentinel — one line.
 *
 * @since 0.1.0
 * @category encoding
 */
export const dataFrame = (text: string): string => `data: ${text}\n\n`

/**
 * A moment at which a stream had nothing to send (a poll that found no
 * change): where a keep-alive comment may go, if one is due. Streams that
 * poll anyway carry their own keep-alive clock this way, without a timer
 * fiber of their own.
 *
 * @since 0.1.0
 * @category models
 */
export const idle: unique symbol = Symbol.for("effect-agent-pipeline/server/SseIdle")

/**
 * @since 0.1.0
 * @category models
 */
export type Idle = typeof idle

/**
 * Numbers events from 1, in stream order ({@link idle} moments pass
 * through unnumbered).
 *
 * @since 0.1.0
 * @category encoding
 */
export const numbered = <E, R>(events: Stream.Stream<SseEvent | Idle, E, R>): Stream.Stream<string | Idle, E, R> =>
  Stream.mapAccum(
    events,
    0,
    (id, e): readonly [number, string | Idle] => e === idle ? [id, idle] : [id + 1, frame(id + 1, e)]
  )

/**
 * Both streams' elements as they come; ends when `left` ends (`right` is
 * then interrupted), fails when either fails.
 *
 * Not `Stream.merge`: its channel forks a fiber for every element it pulls,
 * which made a token's way to the socket cost ~10× the pipeline's own work
 * per token (`bench/server-streams.ts`). Here each side runs in one fiber
 * for the whole stream, into a bounded mailbox (back-pressure: a slow
 * client slows the producers, it never buffers without bound).
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeLeft = <A, E, R, B, E2, R2>(
  left: Stream.Stream<A, E, R>,
  right: Stream.Stream<B, E2, R2>
): Stream.Stream<A | B, E | E2, R | R2> =>
  Stream.unwrapScoped(Effect.gen(function*() {
    const mailbox = yield* Mailbox.make<A | B, E | E2>(64)
    yield* Stream.runForEachChunk(left, (chunk) => mailbox.offerAll(chunk)).pipe(
      Effect.onExit((exit) => mailbox.done(exit)),
      Effect.forkScoped
    )
    yield* Stream.runForEachChunk(right, (chunk) => mailbox.offerAll(chunk)).pipe(
      Effect.onExit((exit) =>
        Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause) ? mailbox.failCause(exit.cause) : Effect.void
      ),
      Effect.forkScoped
    )
    return Mailbox.toStream(mailbox)
  }))

/**
 * Frames as bytes, with a keep-alive comment whenever `keepAlive` passes
 * without a frame. The stream ends when `frames` ends. Time is the
 * `Clock`'s, so `TestClock` drives the keep-alives in tests.
 *
 * @since 0.1.0
 * @category encoding
 */
export const body = <E, R>(
  frames: Stream.Stream<string, E, R>,
  keepAlive: Duration.DurationInput
): Stream.Stream<Uint8Array, E, R> =>
  Stream.suspend(() => {
    const every = Math.max(1, Duration.toMillis(Duration.decode(keepAlive)))
    const encoder = new TextEncoder()
    let lastSent = 0
    const sent = Effect.map(Clock.currentTimeMillis, (now) => {
      lastSent = now
    })
    // Sleeps until a keep-alive is due; a frame sent meanwhile moves the due time.
    const idle: Effect.Effect<string> = Effect.gen(function*() {
      while (true) {
        const now = yield* Clock.currentTimeMillis
        const due = lastSent + every
        if (now >= due) {
          lastSent = now
          return keepAliveFrame
        }
        yield* Effect.sleep(Duration.millis(due - now))
      }
    })
    const merged = mergeLeft(Stream.tap(frames, () => sent), Stream.repeatEffect(idle))
    return Stream.concat(Stream.drain(Stream.fromEffect(sent)), merged).pipe(
      Stream.map((text) => encoder.encode(text))
    )
  })

/**
 * Frames as bytes; at an {@link idle} moment, a keep-alive comment if
 * `keepAlive` passed since the last thing sent — so the comments are as
 * precise as the stream's idle moments are frequent (the poll interval).
 * No timer: the stream's own polling is the clock.
 *
 * @since 0.1.0
 * @category encoding
 */
export const bodyAtIdle = <E, R>(
  frames: Stream.Stream<string | Idle, E, R>,
  keepAlive: Duration.DurationInput
): Stream.Stream<Uint8Array, E, R> =>
  Stream.unwrap(Effect.map(Clock.currentTimeMillis, (start) => {
    const every = Math.max(1, Duration.toMillis(Duration.decode(keepAlive)))
    const encoder = new TextEncoder()
    let lastSent = start
    return frames.pipe(
      Stream.mapEffect((frame) =>
        Effect.map(Clock.currentTimeMillis, (now): Option.Option<string> => {
          if (frame !== idle) {
            lastSent = now
            return Option.some(frame)
          }
          if (now - lastSent < every) return Option.none()
          lastSent = now
          return Option.some(keepAliveFrame)
        })
      ),
      Stream.filterMap((text) => Option.map(text, (t) => encoder.encode(t)))
    )
  }))

/**
 * The response headers of every server stream: no caching, and no
 * buffering by a reverse proxy (nginx reads `x-accel-buffering`).
 *
 * @since 0.1.0
 * @category constants
 */
export const headers = {
  "cache-control": "no-cache, no-transform",
  "x-accel-buffering": "no"
} as const

/**
 * A `200 text/event-stream` response of numbered events, with keep-alives
 * at the stream's {@link idle} moments.
 *
 * @since 0.1.0
 * @category constructors
 */
export const response = (
  events: Stream.Stream<SseEvent | Idle>,
  keepAlive: Duration.DurationInput
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(bodyAtIdle(numbered(events), keepAlive), { contentType: "text/event-stream", headers })

/**
 * A `200 text/event-stream` response of ready frames, with keep-alives on
 * a timer (for streams that have no idle moments of their own).
 *
 * @since 0.1.0
 * @category constructors
 */
export const stream = (
  frames: Stream.Stream<string>,
  keepAlive: Duration.DurationInput
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(body(frames, keepAlive), { contentType: "text/event-stream", headers })
