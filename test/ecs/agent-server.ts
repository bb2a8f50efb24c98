/**
 * A local stand-in for the ECS container agent's task scale-in protection endpoint
 * (`$ECS_AGENT_URI/task-protection/v1/state`), answering PUT and GET in the documented shapes:
 * `{"protection":{"ExpirationDate","ProtectionEnabled","TaskArn"}}`, or `{"failure":{...}}` when told to fail.
 * It records every request, with the time it arrived.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

interface AgentRequest {
  method: string;
  path: string;
  body: { ProtectionEnabled?: boolean; ExpiresInMinutes?: number } | null;
  at: number;
}

export interface FakeAgent {
  /** The value ECS puts in ECS_AGENT_URI. */
  uri: string;
  requests: AgentRequest[];
  /** Whether the task is protected now, by the requests so far. */
  state: { enabled: boolean; expiresAt: number | null };
  /** Answer every request with this failure reason instead (e.g. TASK_NOT_VALID). */
  failWith: string | null;
  close(): Promise<void>;
}

const TASK_ARN = 'arn:aws:ecs:us-east-1:123456789012:task/jobs-cluster/0123456789abcdef';

export async function startFakeAgent(): Promise<FakeAgent> {
  const agent: Omit<FakeAgent, 'uri' | 'close'> = {
    requests: [],
    state: { enabled: false, expiresAt: null },
    failWith: null,
  };
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = raw ? (JSON.parse(raw) as AgentRequest['body']) : null;
      agent.requests.push({ method: req.method ?? '', path: req.url ?? '', body, at: Date.now() });
      const send = (status: number, answer: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      };
      if (req.url !== '/v1/abc123/task-protection/v1/state')
        return send(404, { error: { Code: 'NotFound', Message: req.url } });
      if (agent.failWith) return send(400, { failure: { Arn: TASK_ARN, Detail: null, Reason: agent.failWith } });
      if (req.method === 'PUT') {
        if (typeof body?.ProtectionEnabled !== 'boolean')
          return send(400, { error: { Code: 'InvalidParameterException', Message: 'ProtectionEnabled is required' } });
        const minutes = body.ExpiresInMinutes ?? 120;
        if (body.ProtectionEnabled && (minutes < 1 || minutes > 2880))
          return send(400, { error: { Code: 'InvalidParameterException', Message: 'ExpiresInMinutes' } });
        agent.state = body.ProtectionEnabled
          ? { enabled: true, expiresAt: Date.now() + minutes * 60_000 }
          : { enabled: false, expiresAt: null };
      } else if (req.method !== 'GET') {
        return send(405, { error: { Code: 'MethodNotAllowed', Message: String(req.method) } });
      }
      const expiration =
        agent.state.expiresAt === null ? null : new Date(agent.state.expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
      send(200, {
        protection: { ExpirationDate: expiration, ProtectionEnabled: agent.state.enabled, TaskArn: TASK_ARN },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(agent, {
    // ECS gives each task a path of its own under the agent's address.
    uri: `http://127.0.0.1:${port}/v1/abc123`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  }) as FakeAgent;
}
