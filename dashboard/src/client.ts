// The urql client of one API key: queries and mutations over POST /graphql
// (the key in X-API-KEY), subscriptions over one graphql-ws WebSocket on
// GET /graphql (the key in connection_init), retried for ever while the
// page is open so that a lost connection resumes on its own.
import { Client, cacheExchange, fetchExchange, subscriptionExchange } from '@urql/core';
import { createClient } from 'graphql-ws';

/** The WebSocket's state, as the header shows it. */
export type Link = 'idle' | 'connecting' | 'live' | 'lost';

export interface Session {
  client: Client;
  dispose(): void;
}

export function newSession(key: string, onLink: (l: Link) => void): Session {
  const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
  let lost = false;
  const ws = createClient({
    url: `${scheme}://${location.host}/graphql`,
    connectionParams: { apiKey: key },
    lazy: true,
    keepAlive: 10_000,
    retryAttempts: Number.MAX_SAFE_INTEGER,
    shouldRetry: () => true,
    retryWait: (tries) => new Promise((r) => setTimeout(r, Math.min(500 * 2 ** tries, 8_000))),
    on: {
      connecting: () => onLink(lost ? 'lost' : 'connecting'),
      connected: () => {
        lost = false;
        onLink('live');
      },
      closed: (e) => {
        // 1000: closed on purpose (no subscription left, or the page ends).
        lost = (e as CloseEvent | undefined)?.code !== 1000;
        onLink(lost ? 'lost' : 'idle');
      },
    },
  });
  const client = new Client({
    url: '/graphql',
    requestPolicy: 'cache-and-network',
    fetchOptions: { headers: { 'X-API-KEY': key } },
    exchanges: [
      cacheExchange,
      fetchExchange,
      subscriptionExchange({
        forwardSubscription(request) {
          const input = { ...request, query: request.query || '' };
          return {
            subscribe(sink) {
              return { unsubscribe: ws.subscribe(input, sink) };
            },
          };
        },
      }),
    ],
  });
  return { client, dispose: () => void ws.dispose() };
}
