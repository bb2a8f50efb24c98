/** A bundled entry run with plain `node` (no tsx, no repository on the module path), with captured output. */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';

export function spawnEntryFile(file: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [file], {
    // Outside the repository, so nothing can resolve from its node_modules.
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  process.once('exit', () => child.kill('SIGKILL'));
  return {
    output: () => text,
    exited,
    kill: (signal: NodeJS.Signals = 'SIGTERM') => void child.kill(signal),
    waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = text.split('\n').find((l) => pattern.test(l));
          if (line === undefined) return;
          listeners.delete(check);
          clearTimeout(timer);
          resolve(line);
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms; output:\n${text.slice(-4000)}`));
        }, timeoutMs);
        listeners.add(check);
        check();
      });
    },
  };
}
