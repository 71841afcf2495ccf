// Configs: the measurement configs of each kind with their draft and
// published revisions, versions, assignments; publish, discard a draft,
// edit the draft's JSON, assign to and unassign from groups.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { useSession } from '../app';
import { Badge, Err, fmtTime, Section } from '../ui';

const ConfigsQuery = graphql(`
  query Configs($kind: ConfigKind!) {
    measurementConfigsConnection(kind: $kind, first: 100) {
      totalCount
      edges { node {
        id kind name description isDefault updatedAt draftRevision publishedRevision deliveredClientCount warnings
        draftVersion { id revision data }
        publishedVersion { id revision data publishedAt publishedByName studyCount }
        revisions { id revision state createdAt publishedAt createdByName studyCount }
        clientGroups { id name }
      } }
    }
    clientGroupsConnection(first: 100) { edges { node { id name } } }
  }
`);

const Publish = graphql(`mutation Publish($kind: ConfigKind!, $id: Int!) { measurementConfigPublish(kind: $kind, id: $id) { id publishedRevision draftRevision } }`);
const Discard = graphql(`mutation Discard($kind: ConfigKind!, $id: Int!) { measurementConfigDiscardDraft(kind: $kind, id: $id) { id draftRevision } }`);
const SaveDraft = graphql(`mutation SaveDraft($kind: ConfigKind!, $id: Int!, $data: JSON!) { measurementConfigUpdate(kind: $kind, id: $id, input: { data: $data }) { id draftRevision } }`);
const Assign = graphql(`mutation Assign($kind: ConfigKind!, $id: Int!, $groups: [Int!]) { measurementConfigAssign(kind: $kind, id: $id, input: { clientGroupIds: $groups }) { id clientGroups { id name } deliveredClientCount } }`);
const Unassign = graphql(`mutation Unassign($kind: ConfigKind!, $id: Int!, $groups: [Int!]) { measurementConfigUnassign(kind: $kind, id: $id, input: { clientGroupIds: $groups }) { id clientGroups { id name } deliveredClientCount } }`);

export function Configs() {
  const { canEdit } = useSession();
  const [kind, setKind] = useState<'public' | 'automator'>('public');
  const [{ data, error }, refetch] = useQuery({ query: ConfigsQuery, variables: { kind } });
  const [pub, publish] = useMutation(Publish);
  const [dis, discard] = useMutation(Discard);
  const [sav, save] = useMutation(SaveDraft);
  const [asg, assign] = useMutation(Assign);
  const [una, unassign] = useMutation(Unassign);
  const [editing, setEditing] = useState<{ id: number; text: string } | null>(null);
  const [note, setNote] = useState('');
  const again = () => refetch({ requestPolicy: 'network-only' });
  const groups = data?.clientGroupsConnection.edges.map((e) => e.node) || [];
  return (
    <div>
      <div class="section-head"><h1>Configs</h1>
        <label>Kind <select value={kind} onChange={(e) => setKind(e.currentTarget.value as 'public')}><option value="public">public</option><option value="automator">automator</option></select></label>
      </div>
      <Err error={error || pub.error || dis.error || sav.error || asg.error || una.error} />
      {note && <p class="note" role="status">{note}</p>}
      {data?.measurementConfigsConnection.edges.map(({ node: c }) => (
        <Section key={c.id} title={c.name} actions={<span>
          {c.isDefault && <Badge kind="online">default</Badge>}{' '}
          {c.draftRevision != null && <Badge kind="warning">draft r{c.draftRevision}</Badge>}{' '}
          {c.publishedRevision != null && <Badge kind="healthy">published r{c.publishedRevision}</Badge>}
        </span>}>
          <p class="muted">{c.description} · delivered to {c.deliveredClientCount} probes · updated {fmtTime(c.updatedAt)}
            {c.publishedVersion && ` · ${c.publishedVersion.studyCount} studies, published ${fmtTime(c.publishedVersion.publishedAt)} ${c.publishedVersion.publishedByName || ''}`}</p>
          {c.warnings.map((w) => <p class="warning">{w}</p>)}
          {canEdit && (
            <div class="actions">
              {c.draftRevision != null && <button onClick={async () => { const r = await publish({ kind, id: c.id }); if (!r.error) { setNote(`Published ${c.name} revision ${r.data?.measurementConfigPublish.publishedRevision}.`); again(); } }}>Publish draft</button>}
              {c.draftRevision != null && <button onClick={async () => { await discard({ kind, id: c.id }); again(); }}>Discard draft</button>}
              <button onClick={() => setEditing({ id: c.id, text: JSON.stringify((c.draftVersion || c.publishedVersion)?.data ?? {}, null, 2) })}>Edit draft</button>
              <label>Assign to group <select onChange={async (e) => { const g = Number(e.currentTarget.value); e.currentTarget.value = ''; if (g) { await assign({ kind, id: c.id, groups: [g] }); again(); } }}>
                <option value="">choose…</option>{groups.map((g) => <option value={String(g.id)}>{g.name}</option>)}
              </select></label>
            </div>
          )}
          {editing?.id === c.id && (
            <form onSubmit={async (e) => { e.preventDefault(); let parsed: unknown; try { parsed = JSON.parse(editing.text); } catch (err) { setNote(`Not JSON: ${err}`); return; } const r = await save({ kind, id: c.id, data: parsed }); if (!r.error) { setEditing(null); setNote(`Saved a draft of ${c.name}.`); again(); } }}>
              <label for={`cfg-${c.id}`}>Draft (JSON)</label>
              <textarea id={`cfg-${c.id}`} rows={12} value={editing.text} onInput={(e) => setEditing({ id: c.id, text: e.currentTarget.value })} />
              <button type="submit">Save draft</button> <button type="button" onClick={() => setEditing(null)}>Cancel</button>
            </form>
          )}
          <h3>Assigned groups</h3>
          {c.clientGroups.length === 0 ? <p class="muted">None.</p> : (
            <ul>{c.clientGroups.map((g) => <li key={g.id}>{g.name} {canEdit && <button class="small" onClick={async () => { await unassign({ kind, id: c.id, groups: [g.id] }); again(); }}>Unassign</button>}</li>)}</ul>
          )}
          <h3>Versions</h3>
          <table class="grid">
            <thead><tr><th scope="col">Revision</th><th scope="col">State</th><th scope="col">Studies</th><th scope="col">Created</th><th scope="col">Published</th></tr></thead>
            <tbody>{c.revisions.map((r) => (
              <tr key={r.id}><th scope="row">r{r.revision}</th><td>{r.state}</td><td>{r.studyCount}</td><td>{fmtTime(r.createdAt)} {r.createdByName || ''}</td><td>{fmtTime(r.publishedAt)}</td></tr>
            ))}</tbody>
          </table>
        </Section>
      ))}
    </div>
  );
}
