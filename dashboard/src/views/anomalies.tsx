// Anomalies: open and resolved episodes, filtered by status, severity,
// type, metric and probe; resolve, feedback up/down, the detection
// overrides, and the assistant's explanation streamed when it is on.
import { useMemo, useState } from 'preact/hooks';
import { useMutation, useQuery, useSubscription } from '@urql/preact';
import { graphql, type ResultOf } from '../graphql';
import { useSession } from '../app';
import { Badge, Err, fmtTime, Section, useRefetchOn } from '../ui';

const AnomaliesQuery = graphql(`
  query Anomalies($filter: AnomalyEventFilter, $ids: [ID!], $facets: JSON!) {
    anomalyEventsConnection(first: 100, filter: $filter, clientIds: $ids) {
      totalCount
      edges { node {
        id status severity measurementType subject metric detectionPass firstSeenAt lastSeenAt resolvedAt value
        client { id uuid label }
      } }
    }
    facets: anomalyEventSearch(body: $facets)
  }
`);

/** The types and metrics the data owner's episodes have, for the filters. */
const facets = {
  size: 0,
  aggs: { types: { terms: { field: 'measurement_type.keyword', size: 100 }, aggs: { metrics: { terms: { field: 'metric.keyword', size: 100 } } } } },
};
interface Facets { aggregations?: { types?: { buckets: { key: string; metrics: { buckets: { key: string }[] } }[] } } }

const OverridesQuery = graphql(`
  query Overrides {
    anomalyDetectionOverrides { id level origin sourceAnomalyId updatedAt updatedByName scope { subject measurementType metric detectionPass } }
  }
`);

const Resolve = graphql(`mutation Resolve($ids: [String!]!) { anomalyEventsResolve(anomalyIds: $ids) { updated requested } }`);

const Feedback = graphql(`
  mutation Feedback($input: AnomalyDetectionOverrideFeedbackInput!) {
    anomalyDetectionOverrideFeedback(input: $input) { deleted anomalyDetectionOverride { id level } }
  }
`);

const DeleteOverride = graphql(`mutation DeleteOverride($id: Int) { anomalyDetectionOverridesDelete(id: $id) }`);

const Explain = graphql(`subscription Explain($input: AiExplainAnomalyInput!) { aiExplainAnomalyStream(input: $input) }`);

type Doc = NonNullable<ResultOf<typeof AnomaliesQuery>>['anomalyEventsConnection']['edges'][number]['node'];

export function Anomalies({ ai, probe }: { ai: boolean; probe: string }) {
  const { tick, canEdit } = useSession();
  const [status, setStatus] = useState('open');
  const [severity, setSeverity] = useState('');
  const [type, setType] = useState('');
  const [metric, setMetric] = useState('');
  const [explaining, setExplaining] = useState<string | null>(null);
  const [note, setNote] = useState('');
  const [feedbacks, setFeedbacks] = useState(0); // the overrides refetch after each
  const variables = useMemo(() => ({
    filter: {
      statuses: status === 'open' ? ['new'] : status === 'resolved' ? ['resolved'] : undefined,
      severities: severity ? [severity] : undefined,
      measurementTypes: type ? [type] : undefined,
      metrics: metric ? [metric] : undefined,
    },
    ids: probe ? [probe] : undefined,
    facets,
  }), [status, severity, type, metric, probe]);
  const [{ data, error, fetching }, refetch] = useQuery({ query: AnomaliesQuery, variables });
  useRefetchOn(tick, refetch);
  const [resolved, resolve] = useMutation(Resolve);
  const [fed, feedback] = useMutation(Feedback);
  const conn = data?.anomalyEventsConnection;
  const types = useMemo(() => ((data?.facets as Facets)?.aggregations?.types?.buckets || []).map((b) => ({
    measurementType: b.key, metrics: b.metrics.buckets.map((m) => m.key),
  })), [data?.facets]);
  const again = () => refetch({ requestPolicy: 'network-only' });

  const doResolve = async (a: Doc) => {
    const r = await resolve({ ids: [a.id] });
    if (!r.error) { setNote(`Resolved ${a.metric} on ${a.client?.label || a.client?.uuid}.`); again(); }
  };
  const doFeedback = async (a: Doc, direction: 'up' | 'down') => {
    const r = await feedback({ input: { direction, sourceAnomalyId: a.id, scope: { subject: a.subject || '', measurementType: a.measurementType || '', metric: a.metric || '', detectionPass: a.detectionPass || '' } } });
    const o = r.data?.anomalyDetectionOverrideFeedback;
    if (o) setFeedbacks((n) => n + 1);
    if (o) setNote(o.deleted ? 'Feedback noted: the override was removed.' : `Feedback noted: ${a.metric} is now detected at level ${o.anomalyDetectionOverride?.level}.`);
  };

  return (
    <div>
      <div class="section-head"><h1>Anomalies</h1>
        <span class="muted" data-testid="anomaly-total">{conn ? `${conn.totalCount} episodes` : ''}</span>
      </div>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>Status
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="open">open</option><option value="resolved">resolved</option><option value="">all</option>
          </select>
        </label>
        <label>Severity
          <select value={severity} onChange={(e) => setSeverity(e.currentTarget.value)}>
            <option value="">all</option><option value="warning">warning</option><option value="critical">critical</option>
          </select>
        </label>
        <label>Type
          <select value={type} onChange={(e) => { setType(e.currentTarget.value); setMetric(''); }}>
            <option value="">all</option>
            {types.map((t) => <option value={t.measurementType}>{t.measurementType}</option>)}
          </select>
        </label>
        <label>Metric
          <select value={metric} onChange={(e) => setMetric(e.currentTarget.value)}>
            <option value="">all</option>
            {(types.find((t) => t.measurementType === type)?.metrics || [...new Set(types.flatMap((t) => t.metrics))]).map((m) => <option value={m}>{m}</option>)}
          </select>
        </label>
        {probe && <span>Probe <a href={`#/probe/${probe}`}>{conn?.edges[0]?.node.client?.label || probe.slice(0, 8)}</a> <a href="#/anomalies">(all probes)</a></span>}
      </form>
      <Err error={error || resolved.error || fed.error} />
      {note && <p class="note" role="status">{note}</p>}
      <table class="grid" aria-busy={fetching} data-testid="anomalies">
        <thead><tr>
          <th scope="col">Episode</th><th scope="col">Probe</th><th scope="col">Severity</th><th scope="col">Status</th>
          <th scope="col">First seen</th><th scope="col">Last seen</th><th scope="col">Value</th><th scope="col">Actions</th>
        </tr></thead>
        <tbody>
          {conn?.edges.map(({ node: a }) => (
            <tr key={a.id} data-anomaly={a.id}>
              <th scope="row">{a.measurementType} · {a.subject} · {a.metric} <span class="muted">({a.detectionPass})</span></th>
              <td>{a.client ? <a href={`#/probe/${a.client.uuid}`}>{a.client.label || a.client.uuid}</a> : '—'}</td>
              <td><Badge kind={a.severity || 'unknown'}>{a.severity}</Badge></td>
              <td>{a.status}{a.resolvedAt ? <span class="muted"> {fmtTime(a.resolvedAt)}</span> : null}</td>
              <td>{fmtTime(a.firstSeenAt)}</td><td>{fmtTime(a.lastSeenAt)}</td><td>{a.value ?? ''}</td>
              <td class="actions">
                {canEdit && a.status !== 'resolved' && <button onClick={() => doResolve(a)}>Resolve</button>}
                {canEdit && <button aria-label={`Useful: keep detecting ${a.metric}`} title="Useful" onClick={() => doFeedback(a, 'up')}>👍</button>}
                {canEdit && <button aria-label={`Not useful: detect ${a.metric} less`} title="Not useful" onClick={() => doFeedback(a, 'down')}>👎</button>}
                {ai && <button onClick={() => setExplaining(a.id)}>Explain</button>}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {explaining && <Explanation id={explaining} onClose={() => setExplaining(null)} />}
      <Overrides feedbacks={feedbacks} />
    </div>
  );
}

/** The assistant's explanation, as its text chunks arrive. */
function Explanation({ id, onClose }: { id: string; onClose: () => void }) {
  const [text, setText] = useState('');
  const [{ error }] = useSubscription({ query: Explain, variables: { input: { anomalyId: id } } }, (_prev, next) => {
    const chunk = next.aiExplainAnomalyStream as { type?: string; delta?: string; errorText?: string };
    if (chunk.type === 'text-delta' && chunk.delta) setText((t) => t + chunk.delta);
    if (chunk.type === 'error') setText((t) => `${t}\n[${chunk.errorText || 'error'}]`);
    return next;
  });
  const data = text;
  return (
    <Section title={`Explanation of ${id}`} actions={<button onClick={onClose}>Close</button>}>
      <Err error={error} />
      <div class="explanation" aria-live="polite" data-testid="explanation">{data || 'Asking the assistant…'}</div>
    </Section>
  );
}

function Overrides({ feedbacks }: { feedbacks: number }) {
  const { canEdit, tick } = useSession();
  const [{ data, error }, refetch] = useQuery({ query: OverridesQuery });
  useRefetchOn(tick + feedbacks, refetch);
  const [del, remove] = useMutation(DeleteOverride);
  return (
    <Section title="Detection overrides">
      <Err error={error || del.error} />
      {data?.anomalyDetectionOverrides.length === 0 ? <p class="muted">None: every metric is detected at its default level. Feedback on an episode adds one.</p> : (
        <table class="grid" data-testid="overrides">
          <thead><tr><th scope="col">Scope</th><th scope="col">Level</th><th scope="col">Origin</th><th scope="col">Updated</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
          <tbody>
            {data?.anomalyDetectionOverrides.map((o) => (
              <tr key={o.id}>
                <th scope="row">{o.scope.measurementType} · {o.scope.subject} · {o.scope.metric} ({o.scope.detectionPass})</th>
                <td>{o.level}</td><td>{o.origin}</td><td>{fmtTime(o.updatedAt)} {o.updatedByName || ''}</td>
                <td>{canEdit && <button onClick={async () => { await remove({ id: o.id }); refetch({ requestPolicy: 'network-only' }); }}>Remove</button>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Section>
  );
}
