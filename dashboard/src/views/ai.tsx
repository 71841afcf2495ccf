// AI usage: this month's tokens against the limit, requests, conversations.
import { useQuery } from '@urql/preact';
import { graphql } from '../graphql';
import { Err, fmtTime } from '../ui';

const AiQuery = graphql(`
  query AiUsage {
    aiAssistantStatus { enabled }
    aiUsage { totalTokens limit remaining percentageUsed requestCount conversationCount resetsAt }
  }
`);

export function AiUsage() {
  const [{ data, error }] = useQuery({ query: AiQuery });
  const u = data?.aiUsage;
  return (
    <div>
      <h1>AI usage</h1>
      <Err error={error} />
      {data && <p>The assistant is {data.aiAssistantStatus.enabled ? 'on' : 'off on this server'}.</p>}
      {u && (
        <dl>
          <dt>Tokens this month</dt>
          <dd><meter min={0} max={Math.max(1, u.limit)} value={u.totalTokens} aria-label="Tokens used of the limit" /> {u.totalTokens} of {u.limit} ({u.percentageUsed.toFixed(1)}%), {u.remaining} left</dd>
          <dt>Requests</dt><dd>{u.requestCount}</dd>
          <dt>Conversations</dt><dd>{u.conversationCount}</dd>
          <dt>Resets</dt><dd>{fmtTime(u.resetsAt)}</dd>
        </dl>
      )}
    </div>
  );
}
