/**
 * SSE framing (issue 21): every event is `id:`, `event:` and one `data:`
 * line of JSON — whatever the values carry (line breaks, CR, U+2028, a
 * forged `\n\nevent: x`), ids count from 1 without gaps, and a
 * `: keep-alive` comment goes out whenever the stream was silent for the
 * keep-alive interval (driven by `TestClock`).
 */
import { Sse as SseParser } from "@effect/experimental"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Duration, Effect, FastCheck, Fiber, Queue, Stream, TestClock } from "effect"
import * as Sse from "../../src/server/internal/sse.js"
import { jsonArbitrary } from "../support/JsonArbitrary.js"

const parse = (text: string) => {
  const events: Array<SseParser.Event> = []
  SseParser.makeParser((e) => {
    if (e._tag === "Event") events.push(e)
  }).feed(text)
  return events
}

const decoder = new TextDecoder()

describe("SSE frames", () => {
  it("a frame is three lines and a blank line; the data is the JSON, unchanged", () => {
    FastCheck.assert(
      FastCheck.property(FastCheck.integer({ min: 1, max: 1e9 }), jsonArbitrary(), (id, data) => {
        const text = Sse.frame(id, Sse.event("progress", data))
        const lines = text.split(/\r\n|\r|\n/)
        expect(lines).toHaveLength(5)
        expect(lines[0]).toBe(`id: ${id}`)
        expect(lines[1]).toBe("event: progress")
        expect(lines[2]?.startsWith("data: ")).toBe(true)
        expect(lines.slice(3)).toEqual(["", ""])
        const [parsed, ...rest] = parse(text)
        expect(rest).toEqual([])
        expect(parsed?.id).toBe(String(id))
        expect(JSON.parse(parsed?.data ?? "")).toEqual(data)
      }),
      { numRuns: 500 }
    )
  })

  it("line breaks in values never break a frame", () => {
    const hostile = { text: "a\nb\rc\r\nd\u2028e\u2029f\n\nevent: completed\ndata: {}\n\n" }
    const text = Sse.frame(7, Sse.event("token", hostile))
    const events = parse(text)
    expect(events).toHaveLength(1)
    expect(events[0]?.event).toBe("token")
    expect(JSON.parse(events[0]?.data ?? "")).toEqual(hostile)
  })

  it("an event name with a line break is refused", () => {
    expect(() => Sse.frame(1, Sse.event("a\nb", {}))).toThrow()
  })

  it.effect("ids count from 1, in stream order", () =>
    Effect.gen(function*() {
      const names = ["started", "token", "progress", "token", "completed"]
      const frames = yield* Stream.runCollect(Sse.numbered(Stream.fromIterable(names.map((n) => Sse.event(n, { n })))))
      const events = parse(Chunk.toReadonlyArray(frames).join(""))
      expect(events.map((e) => e.id)).toEqual(["1", "2", "3", "4", "5"])
      expect(events.map((e) => e.event)).toEqual(names)
    }))
})

describe("keep-alive", () => {
  it.effect("a comment after each silent interval, none while frames flow, and the stream ends with its frames", () =>
    Effect.gen(function*() {
      const input = yield* Queue.unbounded<string>()
      const out = yield* Queue.unbounded<string>()
      const frames = Stream.fromQueue(input).pipe(Stream.takeWhile((f) => f !== "end"))
      const fiber = yield* Sse.body(frames, Duration.seconds(15)).pipe(
        Stream.runForEach((bytes) => Queue.offer(out, decoder.decode(bytes))),
        Effect.fork
      )
      const taken = Effect.map(Queue.takeAll(out), Chunk.toReadonlyArray)
      yield* TestClock.adjust(Duration.seconds(14))
      expect(yield* taken).toEqual([])
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* taken).toEqual([Sse.keepAliveFrame])
      // Frames every 10 s: no comment in between.
      for (let i = 0; i < 3; i++) {
        yield* TestClock.adjust(Duration.seconds(10))
        yield* Queue.offer(input, `frame ${i}`)
        expect(yield* Queue.take(out)).toBe(`frame ${i}`)
        expect(yield* taken).toEqual([])
      }
      // Silence again: a comment 15 s after the last frame, not before.
      yield* TestClock.adjust(Duration.seconds(14))
      expect(yield* taken).toEqual([])
      yield* TestClock.adjust(Duration.seconds(1))
      expect(yield* taken).toEqual([Sse.keepAliveFrame])
      yield* TestClock.adjust(Duration.seconds(15))
      expect(yield* taken).toEqual([Sse.keepAliveFrame])
      yield* Queue.offer(input, "end")
      yield* Fiber.join(fiber)
    }))

  it.effect("at idle moments: a comment only once the interval passed since the last frame", () =>
    Effect.gen(function*() {
      const input = yield* Queue.unbounded<string | Sse.Idle>()
      const out = yield* Queue.unbounded<string>()
      const frames = Stream.fromQueue(input).pipe(Stream.takeWhile((f) => f !== "end"))
      const fiber = yield* Sse.bodyAtIdle(frames, Duration.seconds(15)).pipe(
        Stream.runForEach((bytes) => Queue.offer(out, decoder.decode(bytes))),
        Effect.fork
      )
      // Idle moments every 5 s (a poll interval): a comment at 15 s, 30 s — and not between.
      const step = (item: string | Sse.Idle) =>
        Effect.gen(function*() {
          yield* TestClock.adjust(Duration.seconds(5))
          yield* Queue.offer(input, item)
          yield* Effect.yieldNow()
        })
      const got: Array<string> = []
      const items: ReadonlyArray<string | Sse.Idle> = [
        Sse.idle,
        Sse.idle,
        Sse.idle,
        Sse.idle,
        "frame",
        Sse.idle,
        Sse.idle,
        Sse.idle
      ]
      for (const [i, item] of items.entries()) {
        yield* step(item)
        const sent = Chunk.toReadonlyArray(yield* Queue.takeAll(out))
        got.push(...sent.map((f) => `${(i + 1) * 5}s ${f === Sse.keepAliveFrame ? "keep-alive" : f}`))
      }
      // Idle moments at 5…40 s: comments 15 s after the stream began and 15 s after the frame.
      expect(got).toEqual(["15s keep-alive", "25s frame", "40s keep-alive"])
      yield* Queue.offer(input, "end")
      yield* Fiber.join(fiber)
    }))

  it.effect("the response is text/event-stream, uncached", () =>
    Effect.sync(() => {
      const response = Sse.response(Stream.empty, Duration.seconds(15))
      expect(response.status).toBe(200)
      expect(response.headers["cache-control"]).toBe("no-cache, no-transform")
      expect(response.body._tag === "Stream" ? response.body.contentType : "").toBe("text/event-stream")
    }))
})
