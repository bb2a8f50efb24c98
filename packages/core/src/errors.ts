/** @module errors — typed failures the API maps to HTTP statuses (404, 409, 400). */
import { clip } from './clip';

export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  constructor(readonly resource: string, readonly id: string) {
    super(`${resource} ${clip(id)} not found`);
  }
}

export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}

export class InvalidInputError extends Error {
  override readonly name = 'InvalidInputError';
  constructor(message: string, readonly field?: string) {
    super(message);
  }
}
