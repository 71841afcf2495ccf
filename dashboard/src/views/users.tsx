// Users and API keys: the data owner's users and admin keys; an admin adds
// users and creates (shown once) or deletes keys.
import { useState } from 'preact/hooks';
import { useMutation, useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { useSession } from '../app';
import { Err, fmtTime, Section } from '../ui';

const UsersQuery = graphql(`
  query Users {
    usersConnection(first: 100) { totalCount edges { node { id email username role firstName lastName } } }
  }
`);
const KeysQuery = graphql(`
  query AdminKeys {
    clientAdminApiKeysConnection(first: 100) { totalCount edges { node { id name keyPreview effectiveRole validUntil lastUsedAt createdAt clientAdminUserId } } }
  }
`);
const CreateKey = graphql(`mutation CreateKey($input: ClientAdminApiKeyCreateInput!) { clientAdminApiKeyCreate(input: $input) { id apiKey keyPreview } }`);
const DeleteKey = graphql(`mutation DeleteKey($id: Int!) { clientAdminApiKeyDelete(id: $id) }`);
const CreateUser = graphql(`mutation CreateUser($input: UserCreateInput!) { userCreate(input: $input) { id email role } }`);

type Role = 'viewer' | 'editor' | 'admin' | 'org_admin';

export function Users() {
  const { isAdmin } = useSession();
  const [users, refetchUsers] = useQuery({ query: UsersQuery });
  const [keys, refetchKeys] = useQuery({ query: KeysQuery, pause: !isAdmin });
  const [ck, createKey] = useMutation(CreateKey);
  const [dk, deleteKey] = useMutation(DeleteKey);
  const [cu, createUser] = useMutation(CreateUser);
  const [newKey, setNewKey] = useState('');
  const [keyName, setKeyName] = useState('');
  const [keyRole, setKeyRole] = useState<Role>('viewer');
  const [email, setEmail] = useState('');
  const [userRole, setUserRole] = useState<Role>('viewer');
  return (
    <div>
      <h1>Users and API keys</h1>
      <Section title={`Users (${users.data?.usersConnection.totalCount ?? '…'})`}>
        <Err error={users.error || cu.error} />
        <table class="grid" data-testid="users">
          <thead><tr><th scope="col">User</th><th scope="col">Email</th><th scope="col">Role</th></tr></thead>
          <tbody>{users.data?.usersConnection.edges.map(({ node: u }) => (
            <tr key={u.id}><th scope="row">{u.username}{u.firstName ? ` (${u.firstName} ${u.lastName || ''})` : ''}</th><td>{u.email}</td><td>{u.role}</td></tr>
          ))}</tbody>
        </table>
        {isAdmin && (
          <form class="filters" onSubmit={async (e) => { e.preventDefault(); const r = await createUser({ input: { email, username: email, role: userRole } }); if (!r.error) { setEmail(''); refetchUsers({ requestPolicy: 'network-only' }); } }}>
            <label>Email <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
            <label>Role <RoleSelect value={userRole} onChange={setUserRole} /></label>
            <button type="submit">Add user</button>
          </form>
        )}
      </Section>
      {isAdmin ? (
        <Section title={`Admin API keys (${keys.data?.clientAdminApiKeysConnection.totalCount ?? '…'})`}>
          <Err error={keys.error || ck.error || dk.error} />
          {newKey && <p class="note" role="status">New key (shown once; copy it now): <code data-testid="new-key">{newKey}</code></p>}
          <table class="grid" data-testid="keys">
            <thead><tr><th scope="col">Key</th><th scope="col">Role</th><th scope="col">Valid until</th><th scope="col">Last used</th><th scope="col"><span class="sr-only">Actions</span></th></tr></thead>
            <tbody>{keys.data?.clientAdminApiKeysConnection.edges.map(({ node: k }) => (
              <tr key={k.id}><th scope="row">{k.name || '(no name)'} <code>{k.keyPreview}</code></th><td>{k.effectiveRole || 'the user\'s'}</td><td>{fmtTime(k.validUntil)}</td><td>{fmtTime(k.lastUsedAt)}</td>
                <td><button onClick={async () => { if (confirm(`Delete the key ${k.name || k.keyPreview}?`)) { await deleteKey({ id: k.id }); refetchKeys({ requestPolicy: 'network-only' }); } }}>Delete</button></td></tr>
            ))}</tbody>
          </table>
          <form class="filters" onSubmit={async (e) => { e.preventDefault(); const r = await createKey({ input: { name: keyName || undefined, effectiveRole: keyRole } }); if (r.data) { setNewKey(r.data.clientAdminApiKeyCreate.apiKey || ''); setKeyName(''); refetchKeys({ requestPolicy: 'network-only' }); } }}>
            <label>Name <input value={keyName} onInput={(e) => setKeyName(e.currentTarget.value)} /></label>
            <label>Role <RoleSelect value={keyRole} onChange={setKeyRole} /></label>
            <button type="submit">Create key</button>
          </form>
        </Section>
      ) : <p class="muted">API keys are managed by admins.</p>}
    </div>
  );
}

function RoleSelect({ value, onChange }: { value: Role; onChange: (r: Role) => void }) {
  return (
    <select value={value} onChange={(e) => onChange(e.currentTarget.value as Role)}>
      {['viewer', 'editor', 'admin', 'org_admin'].map((r) => <option value={r}>{r}</option>)}
    </select>
  );
}
