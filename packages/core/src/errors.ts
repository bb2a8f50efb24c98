/** @module errors — typed failures the API maps to HTTP statuses (404, 409, 400). */
import { clip } from './clip';

export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  constructor(
    readonly resource: string,
    readonly id: string,
  ) {
    super(`${resource} ${clip(id)} not found`);
  }
}

export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

/** An Idempotency-Key used again with another payload: the earlier call's execution is not this call's. */
export class IdempotencyMismatchError extends Error {
  override readonly name = 'IdempotencyMismatchError';
  constructor(readonly executionId: string) {
    super(
      `this Idempotency-Key was used for execution ${executionId} with another payload; use a new key for a different run`,
    );
  }
}

export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}
