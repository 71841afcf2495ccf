// Settings: the data owner's detection settings, offline threshold, the
// health thresholds; editable by admins.
import { useEffect, useState } from 'preact/hooks';
import { useMutation, useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { useSession } from '../app';
import { Err, Section } from '../ui';

const SettingsQuery = graphql(`
  query Settings {
    dataOwnerSettings {
      offlineThresholdMinutes offlineThresholdMinutesDefault clientOfflineDetectionEnabled clientDegradedDetectionEnabled studyFailureDetectionEnabled
      clientOfflineDetectionEnabledOnServer clientDegradedDetectionEnabledOnServer studyFailureDetectionEnabledOnServer
    }
    healthThresholds { cpu { warningPercent criticalPercent } memory { warningPercent criticalPercent } filesystem { warningPercent criticalPercent } }
  }
`);
const SaveSettings = graphql(`mutation SaveSettings($input: DataOwnerSettingsInput!) { dataOwnerSettingsUpdate(input: $input) { offlineThresholdMinutes clientOfflineDetectionEnabled clientDegradedDetectionEnabled studyFailureDetectionEnabled } }`);

export function Settings() {
  const { isAdmin } = useSession();
  const [{ data, error }] = useQuery({ query: SettingsQuery });
  const [saved, save] = useMutation(SaveSettings);
  const s = data?.dataOwnerSettings;
  const [form, setForm] = useState({ minutes: '', offline: false, degraded: false, study: false });
  const [note, setNote] = useState('');
  useEffect(() => {
    if (s) setForm({ minutes: String(s.offlineThresholdMinutes ?? ''), offline: s.clientOfflineDetectionEnabled, degraded: s.clientDegradedDetectionEnabled, study: s.studyFailureDetectionEnabled });
  }, [s]);
  if (!s) return <Err error={error} />;
  const h = data.healthThresholds;
  return (
    <div>
      <h1>Settings</h1>
      <Err error={error || saved.error} />
      {note && <p class="note" role="status">{note}</p>}
      <Section title="Detection">
        <form onSubmit={async (e) => { e.preventDefault(); const r = await save({ input: { offlineThresholdMinutes: form.minutes ? Number(form.minutes) : null, clientOfflineDetectionEnabled: form.offline, clientDegradedDetectionEnabled: form.degraded, studyFailureDetectionEnabled: form.study } }); if (!r.error) setNote('Saved.'); }}>
          <fieldset disabled={!isAdmin}>
            <label>Offline after (minutes; default {s.offlineThresholdMinutesDefault}) <input type="number" min={1} value={form.minutes} onInput={(e) => setForm({ ...form, minutes: e.currentTarget.value })} /></label>
            <label><input type="checkbox" checked={form.offline} onChange={(e) => setForm({ ...form, offline: e.currentTarget.checked })} /> Detect offline probes {s.clientOfflineDetectionEnabledOnServer ? '' : '(off on this server)'}</label>
            <label><input type="checkbox" checked={form.degraded} onChange={(e) => setForm({ ...form, degraded: e.currentTarget.checked })} /> Detect degraded probes {s.clientDegradedDetectionEnabledOnServer ? '' : '(off on this server)'}</label>
            <label><input type="checkbox" checked={form.study} onChange={(e) => setForm({ ...form, study: e.currentTarget.checked })} /> Detect failed studies {s.studyFailureDetectionEnabledOnServer ? '' : '(off on this server)'}</label>
            {isAdmin && <button type="submit">Save settings</button>}
          </fieldset>
        </form>
      </Section>
      <Section title="Health thresholds">
        <table class="grid">
          <thead><tr><th scope="col">Metric</th><th scope="col">Warning at</th><th scope="col">Critical at</th></tr></thead>
          <tbody>{(['cpu', 'memory', 'filesystem'] as const).map((m) => <tr key={m}><th scope="row">{m}</th><td>{h[m].warningPercent}%</td><td>{h[m].criticalPercent}%</td></tr>)}</tbody>
        </table>
      </Section>
    </div>
  );
}
