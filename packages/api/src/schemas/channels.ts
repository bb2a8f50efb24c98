/** @module schemas/channels — alert channels on the wire: what POST and PATCH take, and the masked shape shown. */
import { z } from '@hono/zod-openapi';
import { Instant } from './common';

const CHANNEL_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const ChannelName = z
  .string()
  .regex(CHANNEL_NAME, 'must be 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit')
  .openapi({ example: 'ops-slack' });

export const ChannelParams = z.object({
  name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'ops-slack' }),
});

const Url = z
  .string()
  .max(2048)
  .openapi({ description: 'http or https. Write-only past its origin: shown as `<origin>/***`.' });

const Smtp = z
  .object({
    host: z.string().min(1).max(253),
    port: z.number().int().min(1).max(65535).default(587),
    secure: z
      .boolean()
      .default(false)
      .openapi({ description: 'true: TLS from the first byte (port 465); false: STARTTLS when the server offers it.' }),
    user: z.string().min(1).max(256).nullable().default(null),
    password: z.string().max(1024).nullable().default(null).openapi({ description: 'Write-only: shown as `***`.' }),
  })
  .strict();

/** PATCH's smtp: only the fields given change (no defaults filled in). */
const SmtpPatch = z
  .object({
    host: z.string().min(1).max(253),
    port: z.number().int().min(1).max(65535),
    secure: z.boolean(),
    user: z.string().min(1).max(256).nullable(),
    password: z.string().max(1024).nullable(),
  })
  .partial()
  .strict();

const Address = z.email().max(320);
const TopicArn = z
  .string()
  .regex(/^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}(\.fifo)?$/, 'must be an SNS topic ARN')
  .openapi({ example: 'arn:aws:sns:eu-west-1:123456789012:alerts' });

export const ChannelCreate = z
  .discriminatedUnion('kind', [
    z.object({ name: ChannelName, kind: z.literal('webhook'), url: Url }).strict(),
    z.object({ name: ChannelName, kind: z.literal('slack'), url: Url }).strict(),
    z
      .object({
        name: ChannelName,
        kind: z.literal('email'),
        smtp: Smtp,
        from: Address,
        to: z.array(Address).min(1).max(50),
      })
      .strict(),
    z.object({ name: ChannelName, kind: z.literal('sns'), topic_arn: TopicArn }).strict(),
  ])
  .openapi('ChannelCreate');

/** PATCH: the fields to change; the kind stays. An SMTP password left out (or sent back as `***`) is kept. */
export const ChannelPatch = z
  .object({
    url: Url.optional(),
    smtp: SmtpPatch.optional(),
    from: Address.optional(),
    to: z.array(Address).min(1).max(50).optional(),
    topic_arn: TopicArn.optional(),
  })
  .strict()
  .openapi('ChannelPatch');

export const ChannelOut = z
  .object({
    name: z.string(),
    kind: z.enum(['webhook', 'slack', 'email', 'sns']),
    url: z.string().optional().openapi({ description: 'webhook, slack: the origin, the rest masked (`***`).' }),
    smtp: z
      .object({
        host: z.string(),
        port: z.number().int(),
        secure: z.boolean(),
        user: z.string().nullable(),
        password: z.string().nullable().openapi({ description: '`***` when set, null when not.' }),
      })
      .optional(),
    from: z.string().optional(),
    to: z.array(z.string()).optional(),
    topic_arn: z.string().optional(),
    created_at: Instant,
    updated_at: Instant,
  })
  .openapi('Channel');

export const ChannelList = z.object({ data: z.array(ChannelOut) }).openapi('ChannelList');

export const ChannelTestResult = z
  .object({
    delivered: z.boolean(),
    notification_id: z.string().openapi({ description: 'The id the test message carried.' }),
    error: z.string().nullable().openapi({ description: 'Why it was not delivered (no secret in it).' }),
  })
  .openapi('ChannelTestResult');
