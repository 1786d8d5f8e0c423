import { NodeRuntime } from "@effect/platform-node"
import { Chunk, Console, Effect, Stream } from "effect"
import { Redaction } from "effect-agent-pipeline"

const main = Effect.gen(function*() {
  const redactor = yield* Redaction.make({ allow: ["support@example.com"] })
  const { findings, text } = redactor.redact(
    "Mail support@example.com or ann@corp.example; key sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8t"
  )
  yield* Console.log(text)
  yield* Console.log(`found: ${findings.map((f) => f.kind).join(", ")}`)

  // Tokens cut anywhere: the client only ever sees the marker, never a piece of the number.
  const tokens = Stream.make("pay with 4111 11", "11 1111 1", "111 please")
  const streamed = yield* Stream.runCollect(tokens.pipe(Redaction.redactStream(redactor)))
  yield* Console.log(Chunk.toReadonlyArray(streamed).join(""))
})

NodeRuntime.runMain(main)
