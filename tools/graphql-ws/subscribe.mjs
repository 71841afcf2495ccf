// Subscribes to fleetgraph's events with the graphql-ws client over the ws
// package (graphql-transport-ws), as a dashboard would, and prints what
// arrived as one JSON object:
//   {"refused": "<close code and reason for a bad key>",
//    "a": [events of KEY_A's subscription], "b": [events of KEY_B's]}
// It waits for WANT_A events on A and WANT_B on B, then exits.
// Environment: FLEETGRAPH_WS_URL (ws://host:port/graphql), KEY_A, KEY_B,
// WANT_A, WANT_B.
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';

const url = process.env.FLEETGRAPH_WS_URL;
const query = 'subscription { events { id type timestamp data } }';

function client(key) {
  return createClient({ url, webSocketImpl: WebSocket, connectionParams: { apiKey: key }, retryAttempts: 0, lazy: true });
}

// refused answers how the server closed a connection with a bad key.
async function refused() {
  const c = client('client_admin-not-a-key');
  try {
    for await (const r of c.iterate({ query })) {
      return `unexpected result ${JSON.stringify(r)}`;
    }
    return 'completed without an error';
  } catch (err) {
    return err && err.code ? `${err.code} ${err.reason}` : String(err);
  } finally {
    await c.dispose();
  }
}

async function collect(key, want) {
  const c = client(key);
  const got = [];
  try {
    for await (const r of c.iterate({ query })) {
      if (r.errors) throw new Error(JSON.stringify(r.errors));
      got.push(r.data.events);
      if (got.length >= want) break;
    }
  } finally {
    await c.dispose();
  }
  return got;
}

const out = { refused: await refused() };
[out.a, out.b] = await Promise.all([collect(process.env.KEY_A, Number(process.env.WANT_A)), collect(process.env.KEY_B, Number(process.env.WANT_B))]);
process.stdout.write(JSON.stringify(out) + '\n');
