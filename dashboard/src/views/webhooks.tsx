// Webhooks: the endpoints with their state, the deliveries of the one
// picked (status, attempts, response), redeliver, test, enable.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { useSession } from '../app';
import { Badge, Err, fmtTime, Section, useRefetchOn } from '../ui';

const WebhooksQuery = graphql(`
  query Webhooks {
    webhooksConnection(first: 100) { edges { node {
      id name url enabled active eventTypes payloadFormat consecutiveFailures lastDeliveryAt lastSuccessAt lastFailureAt lastResponseStatus lastError autoDisabledAt autoDisabledReason
    } } }
  }
`);

const DeliveriesQuery = graphql(`
  query Deliveries($id: Int!, $after: String) {
    webhookDeliveriesConnection(webhookId: $id, first: 25, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id eventId eventType status attempts maxAttempts responseStatus errorMessage durationMs deliveredAt manual createdAt nextAttemptAt } }
    }
  }
`);

const Redeliver = graphql(`mutation Redeliver($webhookId: Int!, $id: Int!) { webhookDeliveryRedeliver(webhookId: $webhookId, id: $id) { id status } }`);
const Test = graphql(`mutation TestWebhook($id: Int!) { webhookTest(id: $id) { id status responseStatus } }`);
const Enable = graphql(`mutation EnableWebhook($id: Int!) { webhookEnable(id: $id) { id enabled active } }`);

export function Webhooks() {
  const { canEdit, tick } = useSession();
  const [{ data, error }, refetch] = useQuery({ query: WebhooksQuery });
  const [picked, setPicked] = useState<number | null>(null);
  const [t, test] = useMutation(Test);
  const [en, enable] = useMutation(Enable);
  const [note, setNote] = useState('');
  useRefetchOn(tick, refetch);
  const hooks = data?.webhooksConnection.edges.map((e) => e.node) || [];
  const current = picked ?? hooks[0]?.id ?? null;
  return (
    <div>
      <h1>Webhooks</h1>
      <Err error={error || t.error || en.error} />
      {note && <p class="note" role="status">{note}</p>}
      {hooks.length === 0 ? <p class="muted">No webhooks.</p> : (
        <table class="grid" data-testid="webhooks">
          <thead><tr><th scope="col">Webhook</th><th scope="col">State</th><th scope="col">Events</th><th scope="col">Last delivery</th><th scope="col">Failures</th><th scope="col">Actions</th></tr></thead>
          <tbody>{hooks.map((w) => (
            <tr key={w.id} aria-selected={w.id === current}>
              <th scope="row"><button class="link-button" onClick={() => setPicked(w.id)}>{w.name}</button><div class="muted">{w.url}</div></th>
              <td>{w.active ? <Badge kind="online">active</Badge> : <Badge kind="offline">{w.enabled ? 'inactive' : 'disabled'}</Badge>}{w.autoDisabledReason && <span class="muted"> {w.autoDisabledReason}</span>}</td>
              <td>{w.eventTypes.length ? w.eventTypes.join(', ') : 'all'}</td>
              <td>{fmtTime(w.lastDeliveryAt)} {w.lastResponseStatus ? `(HTTP ${w.lastResponseStatus})` : ''}</td>
              <td>{w.consecutiveFailures}{w.lastError && <span class="muted"> {w.lastError}</span>}</td>
              <td class="actions">
                {canEdit && <button onClick={async () => { const r = await test({ id: w.id }); if (r.data) { setNote(`Test delivery ${r.data.webhookTest.status}${r.data.webhookTest.responseStatus ? ` (HTTP ${r.data.webhookTest.responseStatus})` : ''}.`); setPicked(w.id); } }}>Send test</button>}
                {canEdit && !w.enabled && <button onClick={async () => { await enable({ id: w.id }); refetch({ requestPolicy: 'network-only' }); }}>Enable</button>}
              </td>
            </tr>
          ))}</tbody>
        </table>
      )}
      {current != null && <Deliveries key={`${current}-${note}`} id={current} onNote={setNote} />}
    </div>
  );
}

function Deliveries({ id, onNote }: { id: number; onNote: (s: string) => void }) {
  const { canEdit, tick } = useSession();
  const [{ data, error }, refetch] = useQuery({ query: DeliveriesQuery, variables: { id } });
  const [r, redeliver] = useMutation(Redeliver);
  useRefetchOn(tick, refetch);
  const conn = data?.webhookDeliveriesConnection;
  return (
    <Section title={`Deliveries (${conn?.totalCount ?? '…'})`}>
      <Err error={error || r.error} />
      <table class="grid" data-testid="deliveries">
        <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Response</th><th scope="col">Created</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>{conn?.edges.map(({ node: d }) => (
          <tr key={d.id}>
            <th scope="row">{d.eventType}{d.manual && <span class="muted"> (manual)</span>}</th>
            <td><Badge kind={d.status === 'success' || d.status === 'delivered' ? 'healthy' : d.status === 'failed' ? 'critical' : 'warning'}>{d.status}</Badge></td>
            <td>{d.attempts}/{d.maxAttempts}</td>
            <td>{d.responseStatus ? `HTTP ${d.responseStatus}` : ''} {d.errorMessage || ''} {d.durationMs != null ? `${d.durationMs} ms` : ''}</td>
            <td>{fmtTime(d.createdAt)}</td>
            <td>{canEdit && <button onClick={async () => { const x = await redeliver({ webhookId: id, id: d.id }); if (x.data) { onNote(`Redelivered ${d.eventType}: ${x.data.webhookDeliveryRedeliver.status}.`); } }}>Redeliver</button>}</td>
          </tr>
        ))}</tbody>
      </table>
    </Section>
  );
}
