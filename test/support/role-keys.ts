/** One API key per role, for tests of roles and the audit trail (names as the audit rows show them). */
import type { ApiKey } from '@jobs/api';
import type { Role } from '@jobs/core';

export const ROLE_KEYS: ApiKey[] = [
  { name: 'support', role: 'read', key: 'rd-0f3c1b9a77e2d4' },
  { name: 'ci', role: 'operate', key: 'op-8a2e5d01c6b3f9' },
  { name: 'platform', role: 'admin', key: 'ad-5b7c9e13d2a046' },
];

export const keyOf = (role: Role): ApiKey => ROLE_KEYS.find((k) => k.role === role)!;
export const bearer = (role: Role) => ({ Authorization: `Bearer ${keyOf(role).key}` });
