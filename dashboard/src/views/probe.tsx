// Probe: its measurements' metric over time (type, metric and range picked;
// other probes side by side), its anomaly episodes shaded on the chart, its
// system status history, registration key, contracts and configuration.
import { useEffect, useMemo, useState } from 'preact/hooks';
import { useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { useSession } from '../app';
import { Chart, type Band } from '../chart';
import { Badge, Err, fmtAgo, fmtTime, go, Section, useDebounced, useRefetchOn } from '../ui';

const ProbeQuery = graphql(`
  query Probe($id: ID!) {
    client(id: $id) {
      id uuid label extraLabel tags type offline lastSeenAt lastMeasurementAt lastClientType lastClientVersion createdAt disabledAt disabledReason
      registrationKey { id registrationKey comment validUntil capability { id name } }
      clientGroups { id name }
      ispContracts { id name ispName downloadSpeed uploadSpeed monthlyPrice currency validFrom validUntil }
      configuration { managed publicConfigId automatorConfigId }
      deliveredPublicConfig { id name }
      deliveredAutomatorConfig { id name }
      health { state reasons { metric percent severity } }
      systemStatusRecords(first: 100) {
        totalCount
        edges { node { id createdAt cpuAveragePercent memoryAveragePercent filesystems { mount finalPercent } } }
      }
    }
  }
`);

const PeersQuery = graphql(`
  query ProbePeers($search: String) {
    clientsConnection(first: 8, filter: { search: $search }) { edges { node { id uuid label } } }
  }
`);

const PeerQuery = graphql(`query ProbePeer($id: ID!) { client(id: $id) { id uuid label } }`);

const SeriesQuery = graphql(`
  query ProbeSeries($body: JSON!, $ids: [ID!], $since: Time) {
    measurementSearch(body: $body)
    anomalyEventsConnection(first: 100, clientIds: $ids, filter: { since: $since }) {
      edges { node { id severity status measurementType metric firstSeenAt lastSeenAt value client { id uuid label } } }
    }
  }
`);

/** The probe's measurement types, and the metrics of each (its newest measurement's statistic_values). */
const TypesQuery = graphql(`query ProbeTypes($body: JSON!) { measurementSearch(body: $body) }`);

const ranges: Record<string, { seconds: number; interval: string; step: number }> = {
  '24 hours': { seconds: 86400, interval: '1h', step: 3600 },
  '7 days': { seconds: 7 * 86400, interval: '3h', step: 3 * 3600 },
  '30 days': { seconds: 30 * 86400, interval: '6h', step: 6 * 3600 },
  '90 days': { seconds: 90 * 86400, interval: '1d', step: 86400 },
};

export function Probe({ ids }: { ids: string[] }) {
  const { tick } = useSession();
  const [main, ...others] = ids;
  const [{ data, error }, refetch] = useQuery({ query: ProbeQuery, variables: { id: main } });
  useRefetchOn(tick, refetch);
  const c = data?.client;
  const [type, setType] = useState('SpeedtestMeasurement');
  const [metric, setMetric] = useState('download');
  const [range, setRange] = useState('30 days');
  // The types and metrics are asked for once the first chart is drawn: the
  // chart's aggregation goes first, without this one beside it.
  const [drawn, setDrawn] = useState(false);
  const found = useProbeTypes(drawn ? (isUuid(main) ? main : c?.uuid) : undefined);
  const types = found.length ? found : [{ measurementType: type, metrics: [metric] }]; // the shown one until then
  useEffect(() => { // the probe has no measurement of the type shown: show its first type
    if (found.length && !found.some((t) => t.measurementType === type)) { setType(found[0].measurementType); setMetric(found[0].metrics[0] || ''); }
  }, [found]);
  const metrics = types.find((t) => t.measurementType === type)?.metrics || [];
  const peers = others.map((id) => <PeerName key={id} id={id} />);
  if (error && !data) return <Err error={error} />;
  if (!c) return <p aria-busy="true">Loading…</p>;
  const status = c.systemStatusRecords.edges.map((e) => e.node).reverse();
  const name = c.label || c.uuid;
  return (
    <div>
      <div class="section-head">
        <h1>{name}</h1>
        <Badge kind={c.health?.state || 'unknown'}>{c.health?.state || 'unknown'}</Badge>
        {c.disabledAt ? <Badge kind="disabled">disabled</Badge> : c.offline ? <Badge kind="offline">offline</Badge> : <Badge kind="online">online</Badge>}
        <span class="muted">last seen {fmtAgo(c.lastSeenAt)} · {c.lastClientType} {c.lastClientVersion} · {c.uuid}</span>
      </div>
      {peers.length > 0 && <p>Compared with {peers}</p>}
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>Measurement type
          <select value={type} onChange={(e) => { const t = e.currentTarget.value; setType(t); setMetric(types.find((x) => x.measurementType === t)?.metrics[0] || ''); }}>
            {types.map((t) => <option value={t.measurementType}>{t.measurementType}</option>)}
          </select>
        </label>
        <label>Metric
          <select value={metric} onChange={(e) => setMetric(e.currentTarget.value)}>
            {metrics.map((m) => <option value={m}>{m}</option>)}
          </select>
        </label>
        <label>Range
          <select value={range} onChange={(e) => setRange(e.currentTarget.value)}>
            {Object.keys(ranges).map((r) => <option value={r}>{r}</option>)}
          </select>
        </label>
        <AddPeer ids={ids} />
      </form>
      <MetricChart ids={ids} type={type} metric={metric} range={range} onDrawn={() => setDrawn(true)} />
      <Section title="System status">
        {status.length === 0 ? <p class="muted">No system status records.</p> : (
          <Chart title="CPU, memory and filesystem (percent)" unit="%" height={200}
            x={status.map((r) => new Date(r.createdAt).getTime() / 1000)}
            series={[
              { label: 'CPU average', values: status.map((r) => r.cpuAveragePercent ?? null) },
              { label: 'Memory average', values: status.map((r) => r.memoryAveragePercent ?? null) },
              { label: 'Filesystem (fullest)', values: status.map((r) => r.filesystems.reduce<number | null>((m, f) => Math.max(m ?? 0, f.finalPercent ?? 0), null)) },
            ]} />
        )}
        <p class="muted">{c.systemStatusRecords.totalCount} records{c.health?.reasons.length ? `; ${c.health.reasons.map((r) => `${r.metric} at ${r.percent.toFixed(0)}% (${r.severity})`).join(', ')}` : ''}.</p>
      </Section>
      <div class="cards">
        <Section title="Registration key">
          {c.registrationKey ? (
            <dl>
              <dt>Key</dt><dd><code>{c.registrationKey.registrationKey}</code></dd>
              <dt>Comment</dt><dd>{c.registrationKey.comment || '—'}</dd>
              <dt>Capability</dt><dd>{c.registrationKey.capability.name}</dd>
              <dt>Valid until</dt><dd>{fmtTime(c.registrationKey.validUntil)}</dd>
            </dl>
          ) : <p class="muted">Registered without a key.</p>}
        </Section>
        <Section title="Contracts">
          {c.ispContracts.length === 0 ? <p class="muted">None.</p> : (
            <ul>{c.ispContracts.map((k) => (
              <li key={k.id}>{k.ispName}: {k.name}, {k.downloadSpeed ? `${k.downloadSpeed / 1000} Mbit/s down` : ''} {k.uploadSpeed ? `${k.uploadSpeed / 1000} up` : ''}
                {k.monthlyPrice != null ? `, ${k.monthlyPrice} ${k.currency || ''}` : ''} <span class="muted">from {fmtTime(k.validFrom)}{k.validUntil ? ` to ${fmtTime(k.validUntil)}` : ''}</span></li>
            ))}</ul>
          )}
        </Section>
        <Section title="Configuration">
          <dl>
            <dt>Managed</dt><dd>{c.configuration.managed ? 'yes' : 'no'}</dd>
            <dt>Delivered public config</dt><dd>{c.deliveredPublicConfig ? <a href="#/configs">{c.deliveredPublicConfig.name}</a> : '—'}</dd>
            <dt>Delivered automator config</dt><dd>{c.deliveredAutomatorConfig ? <a href="#/configs">{c.deliveredAutomatorConfig.name}</a> : '—'}</dd>
            <dt>Groups</dt><dd>{c.clientGroups.map((g) => g.name).join(', ') || '—'}</dd>
            <dt>Tags</dt><dd>{c.tags?.join(', ') || '—'}</dd>
          </dl>
        </Section>
      </div>
    </div>
  );
}

function PeerName({ id }: { id: string }) {
  const [{ data }] = useQuery({ query: PeerQuery, variables: { id } });
  return <a class="peer" href={`#/probe/${id}`}>{data?.client.label || data?.client.uuid || id}</a>;
}

function AddPeer({ ids }: { ids: string[] }) {
  const [text, setText] = useState('');
  const search = useDebounced(text);
  const [{ data }] = useQuery({ query: PeersQuery, variables: { search }, pause: search.length < 2 });
  return (
    <div class="add-peer">
      <label>Compare with <input type="search" value={text} placeholder="probe label" onInput={(e) => setText(e.currentTarget.value)} /></label>
      {search.length >= 2 && data && (
        <ul class="suggest">
          {data.clientsConnection.edges.filter(({ node }) => !ids.includes(node.uuid) && !ids.includes(String(node.id))).map(({ node }) => (
            <li key={node.id}><button type="button" class="link-button" onClick={() => { setText(''); go(`#/probe/${[...ids, node.uuid].join('/')}`); }}>{node.label || node.uuid}</button></li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** MetricChart draws the average of one metric per interval for each probe, with their anomaly episodes. */
function MetricChart({ ids, type, metric, range, onDrawn }: { ids: string[]; type: string; metric: string; range: string; onDrawn: () => void }) {
  // Probes are linked by UUID, so the chart's queries start with the view's
  // (one round trip); a numeric id in a typed URL is looked up first.
  const named = useUuids(ids);
  const uuids = useMemo(() => (ids.every(isUuid) ? ids : named.map((u) => u.uuid)), [ids, named]);
  const labels = useMemo(() => new Map(named.map((u) => [u.uuid, u.label])), [named]);
  const r = ranges[range];
  const [now] = useState(() => Math.floor(Date.now() / 1000));
  const from = now - r.seconds;
  const vars = useMemo(() => ({
    body: {
      size: 0,
      query: { bool: { filter: [
        { terms: { 'client_uuid.keyword': uuids } },
        { term: { 'type.keyword': type } },
        { range: { created_at: { gte: new Date(from * 1000).toISOString() } } },
      ] } },
      aggs: { byClient: { terms: { field: 'client_uuid.keyword', size: 50 }, aggs: {
        t: { date_histogram: { field: 'created_at', fixed_interval: r.interval }, aggs: { v: { avg: { field: `statistic_values.${metric}` } } } },
      } } },
    },
    ids: uuids,
    since: new Date(from * 1000).toISOString(),
  }), [uuids, type, metric, from]);
  const [{ data, error, fetching }] = useQuery({ query: SeriesQuery, variables: vars, pause: uuids.length < ids.length || !metric });
  const chart = useMemo(() => {
    if (!data) return null;
    type Bucket = { key: number; v: { value: number | null } };
    const byClient = (data.measurementSearch as { aggregations?: { byClient?: { buckets: { key: string; t: { buckets: Bucket[] } }[] } } })?.aggregations?.byClient?.buckets || [];
    const x: number[] = [];
    for (let t = Math.floor(from / r.step) * r.step; t <= now; t += r.step) x.push(t);
    const index = new Map(x.map((t, i) => [t, i]));
    const series = uuids.map((uuid) => {
      const values: (number | null)[] = new Array(x.length).fill(null);
      for (const b of byClient.find((c) => c.key === uuid)?.t.buckets || []) {
        const i = index.get(Math.floor(b.key / 1000 / r.step) * r.step);
        if (i !== undefined && b.v.value != null) values[i] = Math.round(b.v.value * 100) / 100;
      }
      return { label: labels.get(uuid) || uuid.slice(0, 8), values };
    });
    const anomalies = data.anomalyEventsConnection.edges.map((e) => e.node);
    const bands: Band[] = anomalies.filter((a) => a.measurementType === type && a.firstSeenAt).map((a) => ({
      from: new Date(a.firstSeenAt!).getTime() / 1000, to: new Date(a.lastSeenAt || a.firstSeenAt!).getTime() / 1000,
      critical: a.severity === 'critical', label: `${a.metric} ${a.severity}`,
    }));
    const points = series.reduce((n, s) => n + s.values.filter((v) => v != null).length, 0);
    return { x, series, bands, anomalies, points };
  }, [data, labels]);
  useEffect(() => { if (chart) onDrawn(); }, [chart]);
  return (
    <Section title={`${type} · ${metric}`}>
      <Err error={error} />
      {chart && (
        <>
          <Chart title={`${metric}, average per ${r.interval}`} x={chart.x} series={chart.series} bands={chart.bands} />
          <p class="muted" data-testid="chart-summary" aria-busy={fetching}>
            {chart.points} intervals with measurements · {chart.bands.length} anomaly episodes of {type} shaded
          </p>
          <h3>Anomaly episodes in range</h3>
          {chart.anomalies.length === 0 ? <p class="muted">None.</p> : (
            <table class="grid" data-testid="probe-anomalies">
              <thead><tr><th scope="col">Episode</th><th scope="col">Probe</th><th scope="col">Severity</th><th scope="col">Status</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Value</th></tr></thead>
              <tbody>
                {chart.anomalies.map((a) => (
                  <tr key={a.id}>
                    <th scope="row"><a href={`#/anomalies?probe=${encodeURIComponent(a.client?.uuid || '')}`}>{a.measurementType} {a.metric}</a></th>
                    <td>{a.client?.label || a.client?.uuid}</td>
                    <td><Badge kind={a.severity || 'unknown'}>{a.severity}</Badge></td><td>{a.status}</td>
                    <td>{fmtTime(a.firstSeenAt)}</td><td>{fmtTime(a.lastSeenAt)}</td><td>{a.value ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </Section>
  );
}

const isUuid = (s: string) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s);

/** useUuids answers the probes' UUIDs and names (one small query each, cached). */
function useUuids(ids: string[]): { uuid: string; label: string }[] {
  const out: { uuid: string; label: string }[] = [];
  for (const id of ids.slice(0, 8)) {
    // The same number of hooks on every render: the view is keyed by its ids (app.tsx).
    const [{ data }] = useQuery({ query: PeerQuery, variables: { id } });
    if (data) out.push({ uuid: data.client.uuid, label: data.client.label || data.client.uuid });
  }
  return useMemo(() => out, [out.map((u) => u.uuid).join()]);
}

interface TypeBuckets { aggregations?: { types?: { buckets: { key: string; last: { hits: { hits: { _source: { statistic_values?: Record<string, unknown> } }[] } } }[] } } }

/** useProbeTypes answers the probe's measurement types with the numeric metrics of each (from its newest measurement). */
function useProbeTypes(uuid?: string): { measurementType: string; metrics: string[] }[] {
  const body = useMemo(() => ({
    size: 0,
    query: { term: { 'client_uuid.keyword': uuid } },
    aggs: { types: { terms: { field: 'type.keyword', size: 50 }, aggs: {
      last: { top_hits: { size: 1, sort: [{ created_at: { order: 'desc' } }], _source: ['statistic_values'] } },
    } } },
  }), [uuid]);
  const [{ data }] = useQuery({ query: TypesQuery, variables: { body }, pause: !uuid });
  return useMemo(() => ((data?.measurementSearch as TypeBuckets)?.aggregations?.types?.buckets || []).map((b) => ({
    measurementType: b.key,
    metrics: Object.entries(b.last.hits.hits[0]?._source.statistic_values || {}).filter(([, v]) => typeof v === 'number').map(([k]) => k).sort(),
  })), [data]);
}
