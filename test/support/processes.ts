/** Child processes for tests: the real entry points (`functions/*.ts` through tsx), with captured output. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface Child {
  process: ChildProcess;
  output: () => string;
  /** Resolves with the first output line matching `pattern`. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) c.kill('SIGKILL');
});

export function spawnEntry(script: string, env: Record<string, string>): Child {
  // `node --import tsx` keeps one process (the tsx CLI would fork a child that a SIGKILL to the parent misses).
  const child = spawn(process.execPath, ['--import', 'tsx', `${ROOT}${script}`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH!, HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let text = '';
  const listeners = new Set<() => void>();
  const onData = (chunk: Buffer) => {
    text += chunk.toString();
    for (const l of listeners) l();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  return {
    process: child,
    output: () => text,
    exited,
    kill: (signal = 'SIGTERM') => void child.kill(signal),
    waitFor(pattern, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const line = text.split('\n').find((l) => pattern.test(l));
          if (line !== undefined) {
            listeners.delete(check);
            clearTimeout(timer);
            resolve(line);
          }
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
