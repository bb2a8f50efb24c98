/**
 * @module dashboard/assets — the stylesheet and the script, served by the app itself (locally and on Lambda).
 * URLs carry a content hash, so a response for the current version can be cached for a year.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { SCRIPT } from './script';
import { STYLES } from './styles';

const version = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

const ASSETS = {
  css: { body: STYLES, type: 'text/css; charset=utf-8', version: version(STYLES) },
  js: { body: SCRIPT, type: 'text/javascript; charset=utf-8', version: version(SCRIPT) },
};

export const ASSET_URLS = {
  css: `/assets/dashboard.css?v=${ASSETS.css.version}`,
  js: `/assets/dashboard.js?v=${ASSETS.js.version}`,
};

/** Serves one asset; a request for the current version may be cached for good, any other for five minutes. */
export function serveAsset(c: Context, kind: keyof typeof ASSETS): Response {
  const asset = ASSETS[kind];
  const etag = `"${asset.version}"`;
  const cache = c.req.query('v') === asset.version ? 'public, max-age=31536000, immutable' : 'public, max-age=300';
  if (c.req.header('if-none-match') === etag) return c.body(null, 304, { ETag: etag, 'Cache-Control': cache });
  return c.body(asset.body, 200, { 'Content-Type': asset.type, ETag: etag, 'Cache-Control': cache });
}
