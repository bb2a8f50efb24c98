/** @module ports/basics — the clock, the transition sink, the logger and a claim: what every pass is given. */
import type { Transition } from '../types';

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** Receives every state transition, in order per execution. Must not throw or block for long. */
export interface TransitionSink {
  emit(transitions: readonly Transition[]): void;
  /** False when nothing would be written (e.g. info logging off): hot paths then skip building transitions. */
  readonly enabled?: boolean;
}

/** The subset of a structured logger (pino-compatible) the core writes to. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A claim on one execution in Redis: the id and the lease token that fences its outcome. */
export interface Claim {
  id: string;
  token: string;
}
