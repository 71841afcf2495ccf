// Apollo Federation v2 check of fleetgraph's subgraph schema, run by the Go
// tests in server/federation_test.go (apitest.RunNode); see
// docs/federation.md.
//
//   node check.mjs compose   composes fleetgraph's SDL with the "racks"
//                            subgraph below and prints {"ok", "errors",
//                            "supergraph"} as JSON (exit 0 either way: the
//                            Go test judges).
//   node check.mjs gateway   composes, starts the racks subgraph and an
//                            Apollo gateway over it and the fleetgraph
//                            server, runs each query of QUERIES through the
//                            gateway and prints {"answers": [...]}.
//
// Environment:
//   FLEETGRAPH_URL       base URL of the running fleetgraph server (127.0.0.1)
//   FLEETGRAPH_KEY       an admin key: reads _service { sdl } (which needs a
//                        key) unless FLEETGRAPH_SDL_FILE is set
//   FLEETGRAPH_SDL_FILE  fleetgraph's SDL from a file instead
//   RACKS                (gateway) JSON {"slots": [{"slot", "uuid"}], "racks": {uuid: rack}}
//   QUERIES              (gateway) JSON [{"key", "query"}]: each query is sent to
//                        the gateway with the key in X-API-KEY
import { readFile } from 'node:fs/promises';
import { composeServices } from '@apollo/composition';
import { ApolloGateway, RemoteGraphQLDataSource } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { startStandaloneServer } from '@apollo/server/standalone';
import { buildSubgraphSchema } from '@apollo/subgraph';
import { parse } from 'graphql';

// The second subgraph: it knows which rack each probe (by UUID) sits in.
// It extends fleetgraph's Client with a field of its own (rack) and
// references Clients from its own root field (rackSlots), so a query can
// cross the two subgraphs both ways.
const racksTypeDefs = `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.7", import: ["@key"])

  type Client @key(fields: "uuid") {
    uuid: String!
    "The rack the probe is mounted in; null when not racked."
    rack: String
  }

  type RackSlot {
    slot: String!
    probe: Client
  }

  type Query {
    rackSlots: [RackSlot!]!
  }
`;

function racksResolvers(data) {
  return {
    Query: { rackSlots: () => data.slots.map((s) => ({ slot: s.slot, probe: { uuid: s.uuid } })) },
    Client: { __resolveReference: (ref) => ({ uuid: ref.uuid, rack: data.racks[ref.uuid] ?? null }) },
  };
}

async function fleetgraphSDL() {
  if (process.env.FLEETGRAPH_SDL_FILE) {
    return readFile(process.env.FLEETGRAPH_SDL_FILE, 'utf8');
  }
  const res = await fetch(new URL('/graphql', process.env.FLEETGRAPH_URL), {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': process.env.FLEETGRAPH_KEY },
    body: JSON.stringify({ query: '{ _service { sdl } }' }),
  });
  const body = await res.json();
  if (!res.ok || body.errors) {
    throw new Error(`fleetgraph _service: ${res.status} ${JSON.stringify(body)}`);
  }
  return body.data._service.sdl;
}

async function compose(racksURL = 'http://127.0.0.1:1/racks') {
  const result = composeServices([
    { name: 'fleetgraph', url: new URL('/graphql', process.env.FLEETGRAPH_URL ?? 'http://127.0.0.1:1').href, typeDefs: parse(await fleetgraphSDL()) },
    { name: 'racks', url: racksURL, typeDefs: parse(racksTypeDefs) },
  ]);
  return {
    ok: !result.errors,
    errors: (result.errors ?? []).map((e) => e.message),
    supergraph: result.supergraphSdl ?? null,
  };
}

// KeyForwarding sends the API key of the gateway's caller to fleetgraph,
// which scopes every field and entity by the key's data owner.
class KeyForwarding extends RemoteGraphQLDataSource {
  willSendRequest({ request, context }) {
    if (context.apiKey) {
      request.http.headers.set('x-api-key', context.apiKey);
    }
  }
}

async function gateway() {
  const data = JSON.parse(process.env.RACKS);
  const racks = new ApolloServer({
    schema: buildSubgraphSchema({ typeDefs: parse(racksTypeDefs), resolvers: racksResolvers(data) }),
    plugins: [ApolloServerPluginInlineTraceDisabled()], // and its log line on stdout
  });
  const { url: racksURL } = await startStandaloneServer(racks, { listen: { host: '127.0.0.1', port: 0 } });

  const composed = await compose(racksURL);
  if (!composed.ok) {
    throw new Error(`composition failed: ${composed.errors.join('\n')}`);
  }
  const gw = new ApolloServer({
    gateway: new ApolloGateway({ supergraphSdl: composed.supergraph, buildService: ({ url }) => new KeyForwarding({ url }) }),
  });
  const { url: gatewayURL } = await startStandaloneServer(gw, {
    listen: { host: '127.0.0.1', port: 0 },
    context: async ({ req }) => ({ apiKey: req.headers['x-api-key'] }),
  });
  try {
    const answers = [];
    for (const q of JSON.parse(process.env.QUERIES)) {
      const res = await fetch(gatewayURL, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': q.key },
        body: JSON.stringify({ query: q.query }),
      });
      answers.push({ status: res.status, body: await res.json() });
    }
    return { answers };
  } finally {
    await gw.stop();
    await racks.stop();
  }
}

const mode = process.argv[2];
const run = { compose, gateway }[mode];
if (!run) {
  console.error(`usage: node check.mjs compose|gateway (got ${mode})`);
  process.exit(2);
}
process.stdout.write(JSON.stringify(await run()) + '\n');
