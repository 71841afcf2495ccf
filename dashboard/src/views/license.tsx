// License usage: license units and unique probes by month, with the split
// by registration key.
import { useMemo } from 'preact/hooks';
import { useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { Chart } from '../chart';
import { Err, Section } from '../ui';

const LicenseQuery = graphql(`
  query License {
    licenseUsage {
      totalUnits
      monthlyUsage { month licenseUnits uniqueClients }
      usageByRegistrationKey { registrationKeyId registrationKey comment totalUnits totalUniqueClients }
    }
  }
`);

export function License() {
  const [{ data, error }] = useQuery({ query: LicenseQuery });
  const u = data?.licenseUsage;
  const months = useMemo(() => u?.monthlyUsage.map((m) => m.month) || [], [u]);
  const series = useMemo(() => u ? [
    { label: 'License units', values: u.monthlyUsage.map((m) => m.licenseUnits) },
    { label: 'Unique probes', values: u.monthlyUsage.map((m) => m.uniqueClients) },
  ] : [], [u]);
  return (
    <div>
      <h1>License usage</h1>
      <Err error={error} />
      {u && (
        <>
          <p data-testid="license-total">{u.totalUnits} license units in total.</p>
          {months.length > 0 && <Chart title="By month" bars x={months.map((_, i) => i)} xLabels={months} series={series} />}
          <Section title="By registration key">
            <table class="grid">
              <thead><tr><th scope="col">Key</th><th scope="col">Units</th><th scope="col">Unique probes</th></tr></thead>
              <tbody>{u.usageByRegistrationKey.map((k) => (
                <tr key={k.registrationKeyId ?? 'none'}><th scope="row">{k.registrationKey || '(none)'} <span class="muted">{k.comment || ''}</span></th><td>{k.totalUnits}</td><td>{k.totalUniqueClients}</td></tr>
              ))}</tbody>
            </table>
          </Section>
        </>
      )}
    </div>
  );
}
