// The shell: the key prompt, the caller's role, the navigation, the live
// event feed and the view of the current location (#/fleet, #/probe/12, ...).
import { createContext } from 'preact';
import { useContext, useEffect, useMemo, useState } from 'preact/hooks';
import { Provider, useQuery, useSubscription } from '@urql/preact';
import { graphql } from './graphql';
import { newSession, type Link } from './client';
import { useRoute, go, fmtTime } from './ui';
import { Fleet } from './views/fleet';
import { Probe } from './views/probe';
import { Anomalies } from './views/anomalies';
import { Configs } from './views/configs';
import { Webhooks } from './views/webhooks';
import { Users } from './views/users';
import { Settings } from './views/settings';
import { License } from './views/license';
import { AiUsage } from './views/ai';

const keyStorage = 'fleetgraph.apiKey';

/** What the views need of the session: may this key change things, and the live feed's tick. */
export interface Ctx {
  role: string;
  canEdit: boolean;
  isAdmin: boolean;
  /** Counts live events (and resumed connections): views refetch when it moves. */
  tick: number;
}
export const SessionCtx = createContext<Ctx>({ role: 'viewer', canEdit: false, isAdmin: false, tick: 0 });
export const useSession = () => useContext(SessionCtx);

export function App() {
  const [key, setKey] = useState(() => sessionStorage.getItem(keyStorage) || '');
  const [link, setLink] = useState<Link>('idle');
  const session = useMemo(() => (key ? newSession(key, setLink) : null), [key]);
  useEffect(() => () => session?.dispose(), [session]);
  if (!session) {
    return <KeyPrompt onKey={(k) => { sessionStorage.setItem(keyStorage, k); setKey(k); }} />;
  }
  const signOut = (why?: string) => {
    sessionStorage.removeItem(keyStorage);
    if (why) sessionStorage.setItem('fleetgraph.signOutReason', why);
    setKey('');
  };
  return (
    <Provider value={session.client}>
      <Shell link={link} signOut={signOut} />
    </Provider>
  );
}

function KeyPrompt({ onKey }: { onKey: (k: string) => void }) {
  const [value, setValue] = useState('');
  const reason = sessionStorage.getItem('fleetgraph.signOutReason');
  return (
    <main class="login">
      <h1>fleetgraph</h1>
      <form onSubmit={(e) => { e.preventDefault(); if (value.trim()) { sessionStorage.removeItem('fleetgraph.signOutReason'); onKey(value.trim()); } }}>
        <label for="api-key">Admin API key</label>
        <input id="api-key" type="password" autoComplete="off" value={value} onInput={(e) => setValue(e.currentTarget.value)} autoFocus />
        <button type="submit">Open the dashboard</button>
      </form>
      {reason && <p class="error" role="alert">{reason}</p>}
      <p class="hint">
        The key is kept in this tab's session storage only. <code>fleetgraph serve --demo</code> prints one;
        otherwise <code>go run ./cmd/fleetgraph bootstrap</code> creates one.
      </p>
    </main>
  );
}

const ViewerQuery = graphql(`query Viewer { viewer { dataOwner role keyKind userId } aiAssistantStatus { enabled } }`);

const EventsSubscription = graphql(`
  subscription Events($types: [String!]) { events(types: $types) { id type timestamp data } }
`);

export const liveTypes = [
  'anomaly_event.created', 'anomaly_event.resolved', 'client.offline', 'client.online', 'client.registered',
  'client_health.warning', 'client_health.critical', 'client_health.recovered',
];

interface LiveEvent { id: string; type: string; timestamp: string; data: unknown }

const nav: [string, string][] = [
  ['fleet', 'Fleet'], ['anomalies', 'Anomalies'], ['configs', 'Configs'], ['webhooks', 'Webhooks'],
  ['users', 'Users & keys'], ['settings', 'Settings'], ['license', 'License usage'], ['ai', 'AI usage'],
];

function Shell({ link, signOut }: { link: Link; signOut: (why?: string) => void }) {
  const [{ data, error }] = useQuery({ query: ViewerQuery });
  const route = useRoute();
  const [feed, setFeed] = useState<LiveEvent[]>([]);
  const [tick, setTick] = useState(0);
  const [wasLost, setWasLost] = useState(false);
  useSubscription({ query: EventsSubscription, variables: { types: liveTypes }, pause: !data }, (_prev, next) => {
    setFeed((f) => [next.events as LiveEvent, ...f].slice(0, 30));
    setTick((t) => t + 1);
    return next;
  });
  useEffect(() => {
    if (link === 'lost') setWasLost(true);
    if (link === 'live' && wasLost) { setWasLost(false); setTick((t) => t + 1); } // catch up on what was missed
  }, [link]);
  useEffect(() => {
    if (error && /401|403|API key|unauthori[sz]ed|forbidden/i.test(error.message)) signOut(`The server refused the key: ${error.message}`);
  }, [error]);
  if (error && !data) return <main class="login"><p class="error" role="alert">{error.message}</p><button onClick={() => signOut()}>Use another key</button></main>;
  // The view renders (and fetches) at once, beside the viewer query: until
  // the role is known it shows no edit control.
  const role = data?.viewer.role || 'viewer';
  const ctx: Ctx = { role, canEdit: role !== 'viewer', isAdmin: role === 'admin' || role === 'org_admin', tick };
  return (
    <SessionCtx.Provider value={ctx}>
      <a class="skip" href="#main">Skip to content</a>
      <header>
        <span class="brand">fleetgraph</span>
        <nav aria-label="Views">
          {nav.map(([path, label]) => (
            <a href={`#/${path}`} aria-current={route.view === path || (path === 'fleet' && route.view === 'probe') ? 'page' : undefined}>{label}</a>
          ))}
        </nav>
        <span class={`link link-${link}`} role="status" aria-live="polite" data-testid="link">
          {link === 'live' ? 'Live' : link === 'lost' ? 'Connection lost — reconnecting…' : link === 'connecting' ? 'Connecting…' : 'Idle'}
        </span>
        {data && <span class="who" title={`key kind ${data.viewer.keyKind}`}>{data.viewer.dataOwner} · <span data-testid="role">{role}</span></span>}
        <button class="small" onClick={() => signOut()}>Sign out</button>
      </header>
      <div class="layout">
        <main id="main" tabIndex={-1}>
          <View route={route} ai={!!data?.aiAssistantStatus.enabled} />
        </main>
        <aside aria-label="Live events">
          <h2>Live events</h2>
          {feed.length === 0 ? <p class="muted">None since this page opened.</p> : (
            <ul class="feed" data-testid="feed">
              {feed.map((e) => <li key={e.id}><LiveItem e={e} /></li>)}
            </ul>
          )}
        </aside>
      </div>
    </SessionCtx.Provider>
  );
}

function LiveItem({ e }: { e: LiveEvent }) {
  const d = (e.data || {}) as { client?: { id?: number; label?: string; uuid?: string }; anomaly_event?: { id?: string; metric?: string; severity?: string } };
  const probe = d.client?.label || d.client?.uuid || '';
  return (
    <span>
      <time>{fmtTime(e.timestamp)}</time> <b>{e.type}</b> {probe && (d.client?.uuid ? <a href={`#/probe/${d.client.uuid}`}>{probe}</a> : probe)}
      {d.anomaly_event && <> · {d.anomaly_event.severity} {d.anomaly_event.metric}</>}
    </span>
  );
}

function View({ route, ai }: { route: ReturnType<typeof useRoute>; ai: boolean }) {
  switch (route.view) {
    case 'probe': return route.args.length ? <Probe key={route.args.join('/')} ids={route.args} /> : <Fleet />;
    case 'anomalies': return <Anomalies ai={ai} probe={route.query.get('probe') || ''} />;
    case 'configs': return <Configs />;
    case 'webhooks': return <Webhooks />;
    case 'users': return <Users />;
    case 'settings': return <Settings />;
    case 'license': return <License />;
    case 'ai': return <AiUsage />;
    case 'fleet': return <Fleet />;
    default:
      go('#/fleet');
      return null;
  }
}
