// Reads one fleetgraph AI completion stream with the AI SDK's own stream
// reader and validates the resulting messages with its validator; prints
// {message} (the assistant's UIMessage) on success, exits non-zero otherwise.
// Environment: FG_URL (the completion URL), FG_KEY (API key), FG_METHOD,
// FG_BODY (the JSON request body), FG_USER_MESSAGE (the user's UIMessage).
import { parseJsonEventStream, readUIMessageStream, uiMessageChunkSchema, validateUIMessages } from 'ai';

const env = process.env;
const res = await fetch(env.FG_URL, {
  method: env.FG_METHOD,
  headers: { 'X-API-KEY': env.FG_KEY, 'Content-Type': 'application/json', Accept: 'text/event-stream' },
  body: env.FG_BODY,
});
if (res.status !== 200) {
  throw new Error(`status ${res.status}: ${await res.text()}`);
}
if (res.headers.get('x-vercel-ai-ui-message-stream') !== 'v1') {
  throw new Error(`header x-vercel-ai-ui-message-stream is ${res.headers.get('x-vercel-ai-ui-message-stream')}, want v1`);
}
const chunks = parseJsonEventStream({ stream: res.body, schema: uiMessageChunkSchema }).pipeThrough(
  new TransformStream({
    transform(part, controller) {
      if (!part.success) {
        throw part.error;
      }
      controller.enqueue(part.value);
    },
  }),
);
let message;
for await (const m of readUIMessageStream({ stream: chunks, terminateOnError: true })) {
  message = m;
}
if (!message) {
  throw new Error('the stream made no message');
}
await validateUIMessages({ messages: [JSON.parse(env.FG_USER_MESSAGE), message] });
console.log(JSON.stringify({ message }));
