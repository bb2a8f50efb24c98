/**
 * @module cli/spec-file — reads a jobs-as-code file: JSON or YAML, either a list of job specs or `{ "jobs": [...] }`.
 * Each spec is a PUT /jobs/by-name body with its `name`; the server validates the rest.
 */
import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';

export interface SpecFile {
  specs: { name: string; body: Record<string, unknown> }[];
  /** Entries that cannot be sent at all (no name, not an object, a name given twice), with the reason. */
  invalid: { entry: string; reason: string }[];
}

/** Largest file read (a job spec is at most a 64 KiB payload and some fields). */
const MAX_SPEC_FILE_BYTES = 16 * 1024 * 1024;

export async function readSpecFile(path: string): Promise<SpecFile> {
  const text = await readFile(path, 'utf8');
  if (Buffer.byteLength(text) > MAX_SPEC_FILE_BYTES)
    throw new Error(`${path}: larger than ${MAX_SPEC_FILE_BYTES} bytes`);
  let document: unknown;
  try {
    document = /\.json$/i.test(path) ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
  } catch (error) {
    throw new Error(`${path}: not valid ${/\.json$/i.test(path) ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  return parseSpecs(document, path);
}

function parseSpecs(document: unknown, where: string): SpecFile {
  const list = Array.isArray(document)
    ? document
    : isRecord(document) && Array.isArray(document.jobs)
      ? document.jobs
      : null;
  if (!list) throw new Error(`${where}: expected a list of job specs, or an object with a "jobs" list`);
  const out: SpecFile = { specs: [], invalid: [] };
  const seen = new Set<string>();
  list.forEach((entry: unknown, i: number) => {
    const label = `#${i + 1}`;
    if (!isRecord(entry)) return void out.invalid.push({ entry: label, reason: 'a job spec must be an object' });
    const name = typeof entry.name === 'string' ? entry.name.trim().normalize('NFC') : '';
    if (!name) return void out.invalid.push({ entry: label, reason: 'needs a "name" (a non-empty string)' });
    if (seen.has(name))
      return void out.invalid.push({ entry: name, reason: 'this name is given more than once in the file' });
    seen.add(name);
    out.specs.push({ name, body: { ...entry, name } });
  });
  return out;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
