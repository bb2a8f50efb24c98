/**
 * Alert channels through the API: create, list, read, change, delete, and a test message delivered to real
 * receivers (a local HTTP server with the signature verified, Slack's shape, a real SMTP server, a server speaking
 * SNS's wire protocol). Secrets are write-only: never in an answer, an audit row or a log line.
 */
import { createAddressPolicy } from '@jobs/core';
import { createChannelSender, verifySignature } from '@jobs/runner';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiHarness, type Harness } from '../api/harness';
import { ROLE_KEYS } from '../support/role-keys';
import { startReceiver, type Receiver } from '../targets/receiver';
import { startSmtp, type SmtpReceiver } from './smtp';
import { startSnsServer, type SnsServer } from './sns-server';

const SIGNING = 'whsec-channels';
const admin = { Authorization: `Bearer ${ROLE_KEYS[2]!.key}` };
const operate = { Authorization: `Bearer ${ROLE_KEYS[1]!.key}` };
const read = { Authorization: `Bearer ${ROLE_KEYS[0]!.key}` };
const SLACK_TOKEN = 'T000/B000/XXXXsecretXXXX';
const SMTP_PASSWORD = 'smtp-pass-42';

let receiver: Receiver;
let smtp: SmtpReceiver;
let sns: SnsServer;
let h: Harness;

beforeAll(async () => {
  receiver = await startReceiver();
  smtp = await startSmtp({ user: 'alerts', password: SMTP_PASSWORD });
  sns = await startSnsServer();
});
afterAll(async () => {
  await Promise.all([receiver.close(), smtp.close(), sns.close()]);
});
beforeEach(async () => {
  const policy = createAddressPolicy({ cidrs: ['127.0.0.1/32'] });
  h = await apiHarness({
    apiKeys: ROLE_KEYS,
    targetPolicy: policy,
    channelSender: createChannelSender({
      policy,
      signingSecrets: [SIGNING],
      snsClient: (region) => sns.client(region),
    }),
  });
  receiver.requests.length = 0;
  receiver.respond = () => undefined;
});
afterEach(async () => {
  await h.cleanup();
});

const create = (body: Record<string, unknown>, headers = admin) =>
  h.call('POST', '/api/v1/channels', { body, headers });

function secretsNowhere(text: string) {
  expect(text).not.toContain(SLACK_TOKEN);
  expect(text).not.toContain(SMTP_PASSWORD);
}

describe('channels API', () => {
  it('creates each kind and shows secrets masked in every answer', async () => {
    const slack = await create({
      name: 'ops-slack',
      kind: 'slack',
      url: `${receiver.url('/services/')}${SLACK_TOKEN}`,
    });
    expect(slack.status).toBe(201);
    expect(slack.body).toMatchObject({
      name: 'ops-slack',
      kind: 'slack',
      url: `http://127.0.0.1:${receiver.port}/***`,
    });
    const email = await create({
      name: 'ops-mail',
      kind: 'email',
      smtp: { host: '127.0.0.1', port: smtp.port, user: 'alerts', password: SMTP_PASSWORD },
      from: 'jobs@example.com',
      to: ['ops@example.com'],
    });
    expect(email.status).toBe(201);
    expect(email.body.smtp).toEqual({
      host: '127.0.0.1',
      port: smtp.port,
      secure: false,
      user: 'alerts',
      password: '***',
    });
    const topic = await create({
      name: 'ops-sns',
      kind: 'sns',
      topic_arn: 'arn:aws:sns:eu-west-1:123456789012:alerts',
    });
    expect(topic.status).toBe(201);
    expect((await create({ name: 'hook', kind: 'webhook', url: receiver.url('/hook?token=abc') })).body.url).toBe(
      `http://127.0.0.1:${receiver.port}/***`,
    );

    const list = await h.call('GET', '/api/v1/channels', { headers: read });
    expect(list.status).toBe(200);
    expect(list.body.data.map((c: { name: string }) => c.name)).toEqual(['hook', 'ops-mail', 'ops-slack', 'ops-sns']);
    const one = await h.call('GET', '/api/v1/channels/ops-mail', { headers: read });
    expect(one.body.smtp.password).toBe('***');
    secretsNowhere(JSON.stringify([slack.body, email.body, list.body, one.body]));

    // Not in the audit trail or the log either.
    const audit = await h.env.pool.query(`SELECT action, target, changes FROM audit_log ORDER BY id`);
    expect(audit.rows.map((r) => [r.action, r.target])).toEqual([
      ['channel.create', 'channel:ops-slack'],
      ['channel.create', 'channel:ops-mail'],
      ['channel.create', 'channel:ops-sns'],
      ['channel.create', 'channel:hook'],
    ]);
    secretsNowhere(JSON.stringify(audit.rows));
    secretsNowhere(JSON.stringify(h.rec.logs));
  });

  it('refuses bad input with a 400 naming the field, a taken name with 409, unknown names with 404', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: 'a', kind: 'pager' }, 'kind'],
      [{ name: 'a', kind: 'webhook', url: 'ftp://example.com/x' }, 'url'],
      [{ name: 'a', kind: 'webhook', url: 'not a url' }, 'url'],
      [{ name: 'a', kind: 'webhook', url: 'http://10.0.0.1/hook' }, 'url'],
      [{ name: 'a', kind: 'webhook', url: 'https://example.com/***' }, 'url'],
      [{ name: 'a', kind: 'webhook', url: 'https://example.com/x', extra: 1 }, 'extra'],
      [{ name: 'bad name!', kind: 'webhook', url: 'https://example.com/x' }, 'name'],
      [{ name: 'a', kind: 'email', smtp: { host: 'mail' }, from: 'nope', to: ['ops@example.com'] }, 'from'],
      [{ name: 'a', kind: 'email', smtp: { host: 'mail' }, from: 'a@example.com', to: [] }, 'to'],
      [{ name: 'a', kind: 'sns', topic_arn: 'arn:aws:sqs:eu-west-1:123456789012:q' }, 'topic_arn'],
    ];
    for (const [body, field] of cases) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(res.body.error.details), JSON.stringify(body)).toContain(field);
    }
    expect((await create({ name: 'dup', kind: 'webhook', url: 'https://example.com/a' })).status).toBe(201);
    const dup = await create({ name: 'dup', kind: 'webhook', url: 'https://example.com/b' });
    expect(dup.status).toBe(409);
    expect(dup.body.error.code).toBe('conflict');
    expect((await h.call('GET', '/api/v1/channels/nope', { headers: read })).status).toBe(404);
    expect((await h.call('PATCH', '/api/v1/channels/nope', { body: {}, headers: admin })).status).toBe(404);
    expect((await h.call('DELETE', '/api/v1/channels/nope', { headers: admin })).status).toBe(404);
    expect((await h.call('POST', '/api/v1/channels/nope/test', { headers: operate })).status).toBe(404);
    // Roles: changes need admin, a test message operate.
    expect((await create({ name: 'x', kind: 'webhook', url: 'https://example.com/a' }, operate)).status).toBe(403);
    expect((await h.call('POST', '/api/v1/channels/dup/test', { headers: read })).status).toBe(403);
  });

  it('changes fields but not the kind, keeps a password left out or sent back masked, deletes', async () => {
    await create({
      name: 'mail',
      kind: 'email',
      smtp: { host: '127.0.0.1', port: smtp.port, user: 'alerts', password: SMTP_PASSWORD },
      from: 'jobs@example.com',
      to: ['ops@example.com'],
    });
    const patched = await h.call('PATCH', '/api/v1/channels/mail', {
      body: { to: ['oncall@example.com'], smtp: { password: '***' } },
      headers: admin,
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.to).toEqual(['oncall@example.com']);
    const stored = await h.env.store.channelGet('mail');
    expect(stored).toMatchObject({ kind: 'email', smtp: { password: SMTP_PASSWORD } });
    const wrong = await h.call('PATCH', '/api/v1/channels/mail', {
      body: { url: 'https://example.com/x' },
      headers: admin,
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toContain('kind cannot change');

    const sent = await h.call('POST', '/api/v1/channels/mail/test', { headers: operate });
    expect(sent.body).toMatchObject({ delivered: true, error: null });
    expect(smtp.mails.at(-1)!.to).toEqual(['oncall@example.com']);

    expect((await h.call('DELETE', '/api/v1/channels/mail', { headers: admin })).status).toBe(204);
    expect((await h.call('GET', '/api/v1/channels/mail', { headers: read })).status).toBe(404);
  });
});

describe('test messages on real receivers', () => {
  it('webhook: one signed JSON POST carrying incident_id, job, rule, state and notification_id', async () => {
    await create({ name: 'hook', kind: 'webhook', url: receiver.url('/alerts?token=abc') });
    const res = await h.call('POST', '/api/v1/channels/hook/test', { headers: operate });
    expect(res.status).toBe(200);
    expect(res.body.delivered).toBe(true);
    expect(receiver.requests).toHaveLength(1);
    const req = receiver.requests[0]!;
    expect(req.path).toBe('/alerts?token=abc');
    expect(verifySignature(req.headers['jobs-signature'] as string, req.body, [SIGNING])).toBe(true);
    expect(verifySignature(req.headers['jobs-signature'] as string, req.body, ['other'])).toBe(false);
    const body = JSON.parse(req.body);
    expect(body).toMatchObject({
      notification_id: res.body.notification_id,
      incident_id: null,
      job: null,
      rule: 'test',
      state: 'open',
      test: true,
    });
    expect(req.headers['idempotency-key']).toBe(`notification-${res.body.notification_id}`);
  });

  it('webhook: a receiver failing or refused is reported, not thrown', async () => {
    await create({ name: 'hook', kind: 'webhook', url: receiver.url('/alerts') });
    receiver.respond = (_req, res) => {
      res.writeHead(500);
      res.end();
      return true;
    };
    const res = await h.call('POST', '/api/v1/channels/hook/test', { headers: operate });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, error: `http://127.0.0.1:${receiver.port} answered HTTP 500` });
    // Allowed at create, refused at send once the allow list no longer names it: the guard is in the connection.
    const strict = createChannelSender({ signingSecrets: [SIGNING] });
    const channel = (await h.env.store.channelGet('hook'))!;
    const sent = await strict.send(channel, {
      notificationId: 'n1',
      incidentId: null,
      job: null,
      rule: 'test',
      state: 'open',
      summary: 's',
      at: new Date(),
    });
    expect(sent).toMatchObject({ ok: false, retryable: false });
    expect(sent.error).toMatch(/^refused/);
  });

  it("slack: Slack's incoming-webhook shape, with every field in the text", async () => {
    await create({ name: 'slack', kind: 'slack', url: `${receiver.url('/services/')}${SLACK_TOKEN}` });
    const res = await h.call('POST', '/api/v1/channels/slack/test', { headers: operate });
    expect(res.body.delivered).toBe(true);
    const body = JSON.parse(receiver.requests[0]!.body);
    expect(typeof body.text).toBe('string');
    expect(body.blocks[0].type).toBe('section');
    const facts = body.blocks[1].text.text as string;
    for (const field of ['notification_id', 'incident_id', 'rule', 'state', 'job'])
      expect(facts).toContain(`*${field}*`);
    expect(facts).toContain(res.body.notification_id);
  });

  it('email: a real SMTP server receives one message, authenticated, with the fields in headers and body', async () => {
    await create({
      name: 'mail',
      kind: 'email',
      smtp: { host: '127.0.0.1', port: smtp.port, user: 'alerts', password: SMTP_PASSWORD },
      from: 'jobs@example.com',
      to: ['ops@example.com', 'dev@example.com'],
    });
    const before = smtp.mails.length;
    const res = await h.call('POST', '/api/v1/channels/mail/test', { headers: operate });
    expect(res.body).toMatchObject({ delivered: true, error: null });
    expect(smtp.mails.length).toBe(before + 1);
    const mail = smtp.mails.at(-1)!;
    expect(mail).toMatchObject({
      from: 'jobs@example.com',
      to: ['ops@example.com', 'dev@example.com'],
      user: 'alerts',
    });
    expect(mail.raw.toLowerCase()).toContain(`x-jobs-notification-id: ${res.body.notification_id}`);
    expect(mail.raw).toContain(`notification-${res.body.notification_id}@jobs-scheduler`);
    expect(mail.raw).toMatch(/rule: test/);

    await h.call('PATCH', '/api/v1/channels/mail', { body: { smtp: { password: 'wrong' } }, headers: admin });
    const refused = await h.call('POST', '/api/v1/channels/mail/test', { headers: operate });
    expect(refused.body.delivered).toBe(false);
    expect(refused.body.error).toContain(`SMTP 127.0.0.1:${smtp.port}`);
    expect(refused.body.error).not.toContain('wrong');
  });

  it('sns: Publish through the AWS SDK to a server speaking the SNS wire protocol', async () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:alerts';
    await create({ name: 'topic', kind: 'sns', topic_arn: arn });
    const before = sns.published.length;
    const res = await h.call('POST', '/api/v1/channels/topic/test', { headers: operate });
    expect(res.body).toMatchObject({ delivered: true, error: null });
    expect(sns.published.length).toBe(before + 1);
    const published = sns.published.at(-1)!;
    expect(published.topicArn).toBe(arn);
    expect(JSON.parse(published.message)).toMatchObject({ notification_id: res.body.notification_id, rule: 'test' });
    expect(published.attributes).toMatchObject({
      notification_id: res.body.notification_id,
      rule: 'test',
      state: 'open',
    });

    sns.failNext = 1;
    const failed = await h.call('POST', '/api/v1/channels/topic/test', { headers: operate });
    expect(failed.body).toMatchObject({ delivered: false });
    expect(failed.body.error).toContain('HTTP 500');
  });
});
