// The typed `graphql` tag: every document is parsed and checked against the
// server's printed schema (server/testdata/schema.graphql, turned into
// graphql-env.d.ts by `gql-tada generate output`), so a schema change that
// breaks a view fails `make dashboard-check`.
import { initGraphQLTada } from 'gql.tada';
import type { introspection } from './graphql-env.d.ts';

export const graphql = initGraphQLTada<{
  introspection: introspection;
  scalars: { Time: string; JSON: unknown; ID: string };
}>();

export type { ResultOf, VariablesOf } from 'gql.tada';
