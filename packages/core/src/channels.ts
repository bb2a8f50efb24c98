/**
 * @module channels — where alert messages go (webhook, Slack, email, SNS), the message every channel carries, and
 * the port that sends one. A channel's secrets (a URL's path and query, which carry tokens in Slack's and most
 * webhooks' URLs; an SMTP password) are write-only: `channelView` is the only shape that leaves the store.
 */
import { MASK } from './access';

interface SmtpSettings {
  host: string;
  port: number;
  /** True: TLS from the first byte (port 465); false: STARTTLS when the server offers it. */
  secure: boolean;
  user: string | null;
  password: string | null;
}

/** A channel's settings in the API's field names (also how they are stored). */
export type ChannelConfig =
  | { kind: 'webhook'; url: string }
  | { kind: 'slack'; url: string }
  | { kind: 'email'; smtp: SmtpSettings; from: string; to: string[] }
  | { kind: 'sns'; topic_arn: string };

export type Channel = ChannelConfig & { name: string; createdAt: Date; updatedAt: Date };

/** What every message says, whatever carries it. `notificationId` is unique per message: receivers deduplicate on it. */
export interface AlertMessage {
  notificationId: string;
  incidentId: string | null;
  job: { id: string; name: string } | null;
  /** The rule's `on` value (`dead`, `failures`, `late`, `missed`, `duration`), or `test`. */
  rule: string;
  state: 'open' | 'resolved';
  /** One line for a human. */
  summary: string;
  at: Date;
  /** True for POST /channels/{name}/test. */
  test?: boolean;
}

/** How one send went. `retryable` false: sending the same message again cannot help (a 4xx, a refused address). */
export interface SendResult {
  ok: boolean;
  error: string | null;
  retryable: boolean;
}

/** Sends one message on one channel. Must not throw: a failure is a result. */
export interface ChannelSender {
  send(channel: ChannelConfig, message: AlertMessage): Promise<SendResult>;
}

/** The URL with its path and query (where tokens live) replaced by `***`: what may be shown of it. */
function maskUrl(url: string): string {
  try {
    const u = new URL(url);
    return u.pathname === '/' && u.search === '' ? u.origin : `${u.origin}/${MASK}`;
  } catch {
    return MASK;
  }
}

/** True when `url` is what maskUrl shows, so a client sending a GET's answer back cannot store the mask. */
export function isMaskedUrl(url: string): boolean {
  return url === MASK || url.endsWith(`/${MASK}`);
}

/** A channel as the API and the dashboard show it: secrets masked. */
export function channelView(channel: ChannelConfig): Record<string, unknown> {
  switch (channel.kind) {
    case 'webhook':
    case 'slack':
      return { kind: channel.kind, url: maskUrl(channel.url) };
    case 'email':
      return {
        kind: 'email',
        smtp: { ...channel.smtp, password: channel.smtp.password === null ? null : MASK },
        from: channel.from,
        to: channel.to,
      };
    case 'sns':
      return { kind: 'sns', topic_arn: channel.topic_arn };
  }
}

/** The message as JSON (webhook bodies, SNS messages): every field in snake_case. */
export function messageJson(message: AlertMessage): Record<string, unknown> {
  return {
    notification_id: message.notificationId,
    incident_id: message.incidentId,
    job: message.job,
    rule: message.rule,
    state: message.state,
    summary: message.summary,
    at: message.at.toISOString(),
    ...(message.test ? { test: true } : {}),
  };
}

/** One line naming everything a message carries (email subjects, Slack text). */
export function messageLine(message: AlertMessage): string {
  const job = message.job ? `${message.job.name} (job ${message.job.id})` : 'no job';
  const state = message.test ? 'test' : message.state;
  return `[${state}] ${message.rule}: ${job}: ${message.summary}`;
}

/** The message POST /channels/{name}/test sends. */
export function testMessage(notificationId: string, at: Date): AlertMessage {
  return {
    notificationId,
    incidentId: null,
    job: null,
    rule: 'test',
    state: 'open',
    summary: 'a test message: this channel works',
    at,
    test: true,
  };
}
