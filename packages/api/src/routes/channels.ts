/**
 * @module routes/channels — alert channels: create, list, read, change, delete (admin), and send a test message
 * (operate). Secrets are write-only: every answer goes through channelView, and audit rows record masked views.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import {
  auditEntry,
  channelView,
  ConflictError,
  isMaskedUrl,
  MASK,
  NotFoundError,
  testMessage,
  type AddressPolicy,
  type Channel,
  type ChannelConfig,
} from '@jobs/core';
import { randomUUID } from 'node:crypto';
import type { z } from '@hono/zod-openapi';
import { needs } from '../auth';
import type { ApiDeps, ApiEnv } from '../deps';
import { validationFailed } from '../errors';
import {
  ChannelCreate,
  ChannelList,
  ChannelOut,
  ChannelParams,
  ChannelPatch,
  ChannelTestResult,
} from '../schemas/channels';
import { bodyErrorResponses, conflictResponse, errorResponses, json, notFoundResponse } from '../schemas/common';

const TAGS = ['channels'];

function channelJson(channel: Channel) {
  return {
    name: channel.name,
    ...channelView(channel),
    created_at: channel.createdAt.toISOString(),
    updated_at: channel.updatedAt.toISOString(),
  } as z.infer<typeof ChannelOut>;
}

/** A webhook or Slack URL the channel may keep: http(s), not a masked value, no refused literal address. */
function checkUrl(url: string, policy: AddressPolicy | undefined): void {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw validationFailed([{ path: 'url', message: 'must be an absolute http or https URL' }]);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw validationFailed([{ path: 'url', message: 'must be an http or https URL' }]);
  if (isMaskedUrl(url))
    throw validationFailed([
      { path: 'url', message: 'is the masked value shown by GET; send the real URL or leave it out' },
    ]);
  if (u.username || u.password)
    throw validationFailed([{ path: 'url', message: 'must not carry a user name or password' }]);
  const refused = policy?.refuseLiteralHost(u);
  if (refused) throw validationFailed([{ path: 'url', message: `refused: ${refused} (see HTTP_TARGET_ALLOW)` }]);
}

function checkConfig(config: ChannelConfig, policy: AddressPolicy | undefined): ChannelConfig {
  if (config.kind === 'webhook' || config.kind === 'slack') checkUrl(config.url, policy);
  if (config.kind === 'email' && config.smtp.password !== null && config.smtp.user === null)
    throw validationFailed([{ path: 'smtp.user', message: 'is required with a password' }]);
  return config;
}

/** The channel after a PATCH: given fields replace the current ones; a password left out or sent as `***` stays. */
function patched(current: Channel, patch: z.infer<typeof ChannelPatch>): ChannelConfig {
  const allowed: Record<ChannelConfig['kind'], string[]> = {
    webhook: ['url'],
    slack: ['url'],
    email: ['smtp', 'from', 'to'],
    sns: ['topic_arn'],
  };
  const wrong = Object.keys(patch).filter((k) => !allowed[current.kind].includes(k));
  if (wrong.length > 0)
    throw validationFailed(
      wrong.map((path) => ({ path, message: `not a field of a ${current.kind} channel (the kind cannot change)` })),
    );
  switch (current.kind) {
    case 'webhook':
    case 'slack':
      return { kind: current.kind, url: patch.url ?? current.url };
    case 'email': {
      const smtp = { ...current.smtp, ...patch.smtp };
      if (patch.smtp?.password === undefined || patch.smtp.password === MASK) smtp.password = current.smtp.password;
      return { kind: 'email', smtp, from: patch.from ?? current.from, to: patch.to ?? current.to };
    }
    case 'sns':
      return { kind: 'sns', topic_arn: patch.topic_arn ?? current.topic_arn };
  }
}

async function channelOr404(deps: ApiDeps, name: string): Promise<Channel> {
  const channel = await deps.store.channelGet(name);
  if (!channel) throw new NotFoundError('channel', name);
  return channel;
}

export function channelRoutes(app: OpenAPIHono<ApiEnv>, deps: ApiDeps): void {
  app.openapi(
    createRoute({
      method: 'post',
      path: '/channels',
      operationId: 'createChannel',
      middleware: [needs('admin', 'channel.create')] as const,
      tags: TAGS,
      summary: 'Create an alert channel: a webhook, a Slack incoming webhook, an email (SMTP) or an SNS topic',
      request: { body: { content: { 'application/json': { schema: ChannelCreate } }, required: true } },
      responses: {
        201: json(ChannelOut, 'The channel, secrets masked'),
        ...errorResponses,
        ...bodyErrorResponses,
        409: conflictResponse,
      },
    }),
    async (c) => {
      const { name, ...fields } = c.req.valid('json');
      const config = checkConfig(fields as ChannelConfig, deps.targetPolicy);
      const created = await deps.store.channelInsert(
        { name, config },
        auditEntry(c.var.commands.actor, 'channel.create', `channel:${name}`),
      );
      if (!created) throw new ConflictError(`a channel named ${JSON.stringify(name)} exists`);
      return c.json(channelJson(created), 201);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/channels',
      operationId: 'listChannels',
      middleware: [needs('read')] as const,
      tags: TAGS,
      summary: 'Every alert channel, by name, secrets masked',
      responses: { 200: json(ChannelList, 'The channels'), ...errorResponses },
    }),
    async (c) => c.json({ data: (await deps.store.channelList()).map(channelJson) }, 200),
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/channels/{name}',
      operationId: 'getChannel',
      middleware: [needs('read')] as const,
      tags: TAGS,
      summary: 'One alert channel, secrets masked',
      request: { params: ChannelParams },
      responses: { 200: json(ChannelOut, 'The channel'), ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => c.json(channelJson(await channelOr404(deps, c.req.valid('param').name)), 200),
  );

  app.openapi(
    createRoute({
      method: 'patch',
      path: '/channels/{name}',
      operationId: 'updateChannel',
      middleware: [needs('admin', 'channel.update')] as const,
      tags: TAGS,
      summary: "Change a channel's fields (not its kind); secrets left out are kept",
      request: {
        params: ChannelParams,
        body: { content: { 'application/json': { schema: ChannelPatch } }, required: true },
      },
      responses: {
        200: json(ChannelOut, 'The channel, secrets masked'),
        ...errorResponses,
        ...bodyErrorResponses,
        404: notFoundResponse,
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const patch = c.req.valid('json');
      const updated = await deps.store.channelUpdate(
        { name, change: (current) => checkConfig(patched(current, patch), deps.targetPolicy) },
        auditEntry(c.var.commands.actor, 'channel.update', `channel:${name}`),
      );
      if (!updated) throw new NotFoundError('channel', name);
      return c.json(channelJson(updated), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'delete',
      path: '/channels/{name}',
      operationId: 'deleteChannel',
      middleware: [needs('admin', 'channel.delete')] as const,
      tags: TAGS,
      summary: 'Delete an alert channel',
      request: { params: ChannelParams },
      responses: { 204: { description: 'Deleted' }, ...errorResponses, 404: notFoundResponse },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const deleted = await deps.store.channelDelete(
        name,
        auditEntry(c.var.commands.actor, 'channel.delete', `channel:${name}`),
      );
      if (!deleted) throw new NotFoundError('channel', name);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/channels/{name}/test',
      operationId: 'testChannel',
      middleware: [needs('operate', 'channel.test')] as const,
      tags: TAGS,
      summary: 'Send a test message on a channel now, and say whether it was delivered',
      request: { params: ChannelParams },
      responses: {
        200: json(ChannelTestResult, 'What the send did (delivered or not, and why not)'),
        ...errorResponses,
        404: notFoundResponse,
      },
    }),
    async (c) => {
      const channel = await channelOr404(deps, c.req.valid('param').name);
      const notificationId = `test-${randomUUID()}`;
      const entry = auditEntry(c.var.commands.actor, 'channel.test', `channel:${channel.name}`);
      if (entry) await deps.store.auditInsert(entry);
      const result = deps.channelSender
        ? await deps.channelSender.send(channel, testMessage(notificationId, deps.clock.now()))
        : { ok: false, error: 'this deployment has no channel sender configured', retryable: false };
      return c.json({ delivered: result.ok, notification_id: notificationId, error: result.error }, 200);
    },
  );
}
