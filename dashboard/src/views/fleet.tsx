// Fleet: every probe with its health, online state, last check-in, open
// anomalies, groups, ISP and delivered config; searched, filtered and sorted
// by the server (clientsConnection), a page of 50 at a time.
import { useMemo, useState } from 'preact/hooks';
import { useQuery } from '@urql/preact';
import { graphql, type VariablesOf } from '../graphql';
import { useSession } from '../app';
import { Badge, Err, fmtAgo, fmtTime, useDebounced, useRefetchOn, go } from '../ui';

const FleetQuery = graphql(`
  query Fleet($first: Int, $after: String, $last: Int, $before: String, $filter: ClientFilter, $orderBy: ClientOrder) {
    clientsConnection(first: $first, after: $after, last: $last, before: $before, filter: $filter, orderBy: $orderBy) {
      totalCount
      pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
      edges {
        node {
          id uuid label tags offline lastSeenAt disabledAt lastClientVersion openAnomalyCount
          health { state reasons { metric percent severity } }
          clientGroups { id name }
          currentIspContract { id ispName }
          deliveredPublicConfig { id name }
          deliveredAutomatorConfig { id name }
        }
      }
    }
  }
`);

const GroupsQuery = graphql(`query FleetGroups { clientGroupsConnection(first: 100) { edges { node { id name } } } }`);

const pageSize = 50;
type Order = NonNullable<VariablesOf<typeof FleetQuery>['orderBy']>;
type Page = { after?: string; before?: string };

export function Fleet() {
  const { tick } = useSession();
  const [search, setSearch] = useState('');
  const [online, setOnline] = useState('');
  const [health, setHealth] = useState('');
  const [group, setGroup] = useState('');
  const [order, setOrder] = useState<Order>({ field: 'label', direction: 'asc' });
  const [page, setPage] = useState<Page>({});
  const [picked, setPicked] = useState<string[]>([]);
  const q = useDebounced(search);
  const filter = useMemo(() => ({
    search: q || undefined,
    offline: online === '' ? undefined : online === 'offline',
    healthStates: health ? [health as 'healthy'] : undefined,
    groupId: group ? Number(group) : undefined,
  }), [q, online, health, group]);
  const variables = page.before
    ? { last: pageSize, before: page.before, filter, orderBy: order }
    : { first: pageSize, after: page.after, filter, orderBy: order };
  const [{ data, error, fetching }, refetch] = useQuery({ query: FleetQuery, variables });
  const [groups] = useQuery({ query: GroupsQuery });
  useRefetchOn(tick, refetch);

  const reset = (f: () => void) => { f(); setPage({}); };
  const sortBy = (field: Order['field']) => reset(() => setOrder((o) => ({ field, direction: o.field === field && o.direction === 'asc' ? 'desc' : 'asc' })));
  const sortMark = (field: string) => (order.field === field ? (order.direction === 'asc' ? 'ascending' : 'descending') : undefined);
  const conn = data?.clientsConnection;

  return (
    <div>
      <div class="section-head">
        <h1>Fleet</h1>
        <span class="muted" data-testid="fleet-total">{conn ? `${conn.totalCount} probes` : ''}</span>
      </div>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>Search <input type="search" value={search} placeholder="label, UUID, tag" onInput={(e) => reset(() => setSearch(e.currentTarget.value))} /></label>
        <label>State
          <select value={online} onChange={(e) => reset(() => setOnline(e.currentTarget.value))}>
            <option value="">all</option><option value="online">online</option><option value="offline">offline</option>
          </select>
        </label>
        <label>Health
          <select value={health} onChange={(e) => reset(() => setHealth(e.currentTarget.value))}>
            <option value="">all</option>
            {['healthy', 'warning', 'critical', 'unknown'].map((h) => <option value={h}>{h}</option>)}
          </select>
        </label>
        <label>Group
          <select value={group} onChange={(e) => reset(() => setGroup(e.currentTarget.value))}>
            <option value="">all</option>
            {groups.data?.clientGroupsConnection.edges.map(({ node }) => <option value={String(node.id)}>{node.name}</option>)}
          </select>
        </label>
        <label>Order
          <select value={`${order.field} ${order.direction}`} onChange={(e) => { const [field, direction] = e.currentTarget.value.split(' '); reset(() => setOrder({ field, direction } as Order)); }}>
            <option value="label asc">label A–Z</option><option value="label desc">label Z–A</option>
            <option value="createdAt desc">newest first</option><option value="createdAt asc">oldest first</option>
            <option value="id asc">id</option>
          </select>
        </label>
        <button type="button" disabled={picked.length === 0} onClick={() => go(`#/probe/${picked.join('/')}`)}>
          Compare {picked.length || ''} selected
        </button>
      </form>
      <Err error={error} />
      <table class="grid" aria-busy={fetching} data-testid="fleet">
        <thead>
          <tr>
            <th scope="col"><span class="sr-only">Select</span></th>
            <th scope="col" aria-sort={sortMark('label')}><button class="link-button" onClick={() => sortBy('label')}>Probe</button></th>
            <th scope="col">Health</th>
            <th scope="col">State</th>
            <th scope="col">Last seen</th>
            <th scope="col">Open anomalies</th>
            <th scope="col">Groups</th>
            <th scope="col">ISP</th>
            <th scope="col">Delivered config</th>
            <th scope="col">Version</th>
          </tr>
        </thead>
        <tbody>
          {conn?.edges.map(({ node: c }) => {
            const h = c.health;
            const n = c.openAnomalyCount;
            const name = c.label || c.uuid;
            return (
              <tr key={c.id}>
                <td><input type="checkbox" aria-label={`Select ${name} to compare`} checked={picked.includes(c.uuid)}
                  onChange={(e) => setPicked((p) => (e.currentTarget.checked ? [...p, c.uuid] : p.filter((x) => x !== c.uuid)))} /></td>
                <th scope="row"><a href={`#/probe/${c.uuid}`}>{name}</a>{c.tags?.length ? <span class="muted"> {c.tags.join(', ')}</span> : null}</th>
                <td><Badge kind={h?.state || 'unknown'}>{h?.state || 'unknown'}</Badge>
                  {h?.reasons.length ? <span class="muted"> {h.reasons.map((r) => `${r.metric} ${r.percent.toFixed(0)}%`).join(', ')}</span> : null}</td>
                <td>{c.disabledAt ? <Badge kind="disabled">disabled</Badge> : c.offline ? <Badge kind="offline">offline</Badge> : <Badge kind="online">online</Badge>}</td>
                <td title={fmtTime(c.lastSeenAt)}>{fmtAgo(c.lastSeenAt)}</td>
                <td>{n > 0 ? <a href={`#/anomalies?probe=${encodeURIComponent(c.uuid)}`}><Badge kind="warning">{n}</Badge></a> : <span class="muted">0</span>}</td>
                <td>{c.clientGroups.map((g) => g.name).join(', ') || <span class="muted">—</span>}</td>
                <td>{c.currentIspContract?.ispName || <span class="muted">—</span>}</td>
                <td>{[c.deliveredPublicConfig, c.deliveredAutomatorConfig].filter(Boolean).map((x) => x!.name).join(', ') || <span class="muted">—</span>}</td>
                <td>{c.lastClientVersion ? `v${c.lastClientVersion}` : ''}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
      <nav class="pager" aria-label="Pages">
        <button disabled={!conn?.pageInfo.hasPreviousPage} onClick={() => setPage({ before: conn?.pageInfo.startCursor || undefined })}>Previous page</button>
        <button disabled={!conn?.pageInfo.hasNextPage} onClick={() => setPage({ after: conn?.pageInfo.endCursor || undefined })}>Next page</button>
      </nav>
    </div>
  );
}
