// Small pieces every view uses: the hash route, time formats, badges, the
// error note, and refetching when the live feed moves.
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { CombinedError } from '@urql/core';

export interface Route { view: string; args: string[]; query: URLSearchParams }

function parse(): Route {
  const [path, q] = location.hash.replace(/^#\/?/, '').split('?');
  const [view = 'fleet', ...args] = path.split('/').filter(Boolean).map(decodeURIComponent);
  return { view, args, query: new URLSearchParams(q || '') };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(parse);
  useEffect(() => {
    const on = () => {
      setRoute(parse());
      document.getElementById('main')?.focus({ preventScroll: true }); // keyboard users land on the new view
    };
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export const go = (hash: string) => { if (location.hash !== hash) location.hash = hash; };

export function fmtTime(t?: string | null): string {
  if (!t) return '—';
  const d = new Date(t);
  return d.toISOString().replace('T', ' ').slice(0, 16) + ' UTC';
}

export function fmtAgo(t?: string | null): string {
  if (!t) return 'never';
  const s = (Date.now() - new Date(t).getTime()) / 1000;
  if (s < 90) return `${Math.max(0, Math.round(s))} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 129600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} d ago`;
}

export function Badge({ kind, children }: { kind: string; children: ComponentChildren }) {
  return <span class={`badge badge-${kind}`}>{children}</span>;
}

export function Err({ error }: { error?: CombinedError | null }) {
  if (!error) return null;
  return <p class="error" role="alert">{error.graphQLErrors.length ? error.graphQLErrors.map((e) => e.message).join('; ') : error.message}</p>;
}

/** refetch runs again (from the network) whenever the live feed's tick moves. */
export function useRefetchOn(tick: number, refetch: (o: { requestPolicy: 'network-only' }) => void) {
  const first = useRef(true);
  useEffect(() => {
    if (first.current) { first.current = false; return; }
    refetch({ requestPolicy: 'network-only' });
  }, [tick]);
}

export function useDebounced<T>(value: T, ms = 250): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value]);
  return v;
}

export function Section({ title, children, actions }: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section>
      <div class="section-head"><h2>{title}</h2>{actions}</div>
      {children}
    </section>
  );
}
