/**
 * The docs hold together: every relative link and anchor in README.md, CHANGELOG.md and docs/**\/*.md resolves (the
 * file exists; `#anchor` is a heading's slug as GitHub makes it, or an explicit `<a id>`), every page under docs/ is
 * reachable from docs/README.md, README.md stays a front page, and prose lines stay readable. No network: links to
 * other sites are not followed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/processes';

/** The Markdown files the checks cover, relative to the repository root. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(join(ROOT, dir)).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(join(ROOT, path)).isDirectory()) return walk(path);
      return name.endsWith('.md') ? [path] : [];
    });
  return ['README.md', 'CHANGELOG.md', ...walk('docs')];
}

/** Lines outside fenced code blocks, with their 1-based numbers. */
function proseLines(text: string): { line: string; n: number; inCode: boolean }[] {
  let fence: string | null = null;
  return text.split('\n').map((line, i) => {
    const marker = /^\s*(```|~~~)/.exec(line)?.[1] ?? null;
    const inCode = fence !== null || marker !== null;
    if (marker && fence === null) fence = marker;
    else if (marker && marker === fence) fence = null;
    return { line, n: i + 1, inCode };
  });
}

/** GitHub's heading slug: lower case, punctuation but `-` and `_` dropped, spaces to `-`; repeats get `-1`, `-2`. */
function slug(heading: string): string {
  const text = heading
    .replace(/<[^>]+>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[*`]/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Every anchor a file offers: its headings' slugs (deduplicated as GitHub does) and explicit `<a id>`/`name`. */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line, inCode } of proseLines(text)) {
    if (inCode) continue;
    for (const m of line.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Inline links `[text](target)` and autolinks outside code: their targets, with line numbers. */
function linksOf(text: string): { target: string; n: number }[] {
  const links: { target: string; n: number }[] = [];
  for (const { line, n, inCode } of proseLines(text)) {
    if (inCode) continue;
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const m of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) links.push({ target: m[1]!, n });
    for (const m of withoutCode.matchAll(/<((?:https?|mailto):[^>]+)>/g)) links.push({ target: m[1]!, n });
  }
  return links;
}

const files = markdownFiles();
const texts = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
const anchors = new Map<string, Set<string>>();
const anchorsFor = (file: string) => {
  if (!anchors.has(file)) anchors.set(file, anchorsOf(texts.get(file) ?? readFileSync(join(ROOT, file), 'utf8')));
  return anchors.get(file)!;
};

describe('docs', () => {
  it('slugs headings as GitHub does', () => {
    expect(slug('Address guard (SSRF)')).toBe('address-guard-ssrf');
    expect(slug("The worker's hot path")).toBe('the-workers-hot-path');
    expect(slug('Local development against AWS (`sst dev`)')).toBe('local-development-against-aws-sst-dev');
    expect(slug('Typed client and the `jobs` CLI')).toBe('typed-client-and-the-jobs-cli');
    expect(slug('Where the supervisor is not there (Lambda, or no C compiler)')).toBe(
      'where-the-supervisor-is-not-there-lambda-or-no-c-compiler',
    );
  });

  it.each(files)('%s: every relative link and anchor resolves', (file) => {
    const broken: string[] = [];
    for (const { target, n } of linksOf(texts.get(file)!)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // another site: not followed
      const [path, anchor] = target.split('#', 2) as [string, string | undefined];
      const resolved = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURIComponent(path)));
      if (resolved.startsWith('..') || !existsSync(join(ROOT, resolved))) {
        broken.push(`${file}:${n}: ${target} (no file ${resolved})`);
        continue;
      }
      if (anchor === undefined || anchor === '') continue;
      if (!resolved.endsWith('.md')) {
        broken.push(`${file}:${n}: ${target} (an anchor into a file that is not Markdown)`);
      } else if (!anchorsFor(resolved).has(decodeURIComponent(anchor))) {
        broken.push(`${file}:${n}: ${target} (no heading #${anchor} in ${resolved})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('reaches every page under docs/ from docs/README.md', () => {
    const reached = new Set<string>(['docs/README.md']);
    const queue = ['docs/README.md'];
    while (queue.length > 0) {
      const file = queue.shift()!;
      for (const { target } of linksOf(texts.get(file)!)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        const path = target.split('#', 1)[0]!;
        const next = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURIComponent(path)));
        if (next.startsWith('docs/') && next.endsWith('.md') && texts.has(next) && !reached.has(next)) {
          reached.add(next);
          queue.push(next);
        }
      }
    }
    expect(files.filter((f) => f.startsWith('docs/') && !reached.has(f))).toEqual([]);
  });

  it('keeps README.md a front page of at most 300 lines that links to the docs index', () => {
    const readme = texts.get('README.md')!;
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toContain('](docs/README.md)');
  });

  it('keeps prose lines at most 120 characters (code blocks and table rows at most 400)', () => {
    const long: string[] = [];
    for (const [file, text] of texts) {
      for (const { line, n, inCode } of proseLines(text)) {
        const limit = inCode || line.startsWith('|') ? 400 : 120;
        if ([...line].length > limit) long.push(`${file}:${n}: ${[...line].length} characters`);
      }
    }
    expect(long).toEqual([]);
  });
});
