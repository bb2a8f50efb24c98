/**
 * @module dashboard/routes — every dashboard route, in one list: method, path, who may use it, handler.
 * The gate enforces `access` for each; tests walk this list, so a new route is covered as soon as it is added.
 */
import type { Context } from 'hono';
import {
  bulkReplayAction,
  cancelAction,
  deleteAction,
  pauseAction,
  replayAction,
  resumeAction,
  triggerAction,
} from './actions';
import { serveAsset } from './assets';
import type { Access } from './gate';
import { deadPage } from './pages/dead';
import { executionOutputStream, executionPage } from './pages/execution';
import { cancelExecutionPage } from './pages/execution-cancel';
import { executionsPage } from './pages/executions';
import { deleteJobPage, jobPage } from './pages/job';
import { createJobSubmit, newJobPage, schedulePreviewFragment } from './pages/job-form';
import { jobsPage } from './pages/jobs';
import { lanesPage, pauseLaneAction, resumeLaneAction } from './pages/lanes';
import { loginPage, loginSubmit, logout } from './pages/login';
import { overviewPage } from './pages/overview';
import { workersPage } from './pages/workers';
import type { DashHandler } from './view';

export interface DashboardRoute {
  method: 'GET' | 'POST';
  /** A Hono path; `:id` segments are numeric. */
  path: string;
  access: Access;
  handler: DashHandler;
}

const ID = ':id{[0-9]+}';
const asset = (kind: 'css' | 'js') => (r: { c: Context }) => serveAsset(r.c, kind);

export const DASHBOARD_ROUTES: readonly DashboardRoute[] = [
  { method: 'GET', path: '/assets/dashboard.css', access: 'public', handler: asset('css') },
  { method: 'GET', path: '/assets/dashboard.js', access: 'public', handler: asset('js') },
  { method: 'GET', path: '/login', access: 'login', handler: loginPage },
  { method: 'POST', path: '/login', access: 'login', handler: loginSubmit },
  { method: 'POST', path: '/logout', access: 'action', handler: logout },

  { method: 'GET', path: '/', access: 'page', handler: overviewPage },
  { method: 'GET', path: '/jobs', access: 'page', handler: jobsPage },
  { method: 'GET', path: '/jobs/new', access: 'page', handler: newJobPage },
  { method: 'GET', path: '/jobs/preview', access: 'fragment', handler: schedulePreviewFragment },
  { method: 'POST', path: '/jobs', access: 'action', handler: createJobSubmit },
  { method: 'GET', path: `/jobs/${ID}`, access: 'page', handler: jobPage },
  { method: 'GET', path: `/jobs/${ID}/delete`, access: 'page', handler: deleteJobPage },
  { method: 'POST', path: `/jobs/${ID}/delete`, access: 'action', handler: deleteAction },
  { method: 'POST', path: `/jobs/${ID}/trigger`, access: 'action', handler: triggerAction },
  { method: 'POST', path: `/jobs/${ID}/pause`, access: 'action', handler: pauseAction },
  { method: 'POST', path: `/jobs/${ID}/resume`, access: 'action', handler: resumeAction },

  { method: 'GET', path: '/executions', access: 'page', handler: executionsPage },
  { method: 'GET', path: `/executions/${ID}`, access: 'page', handler: executionPage },
  { method: 'GET', path: `/executions/${ID}/output`, access: 'fragment', handler: executionOutputStream },
  { method: 'GET', path: `/executions/${ID}/cancel`, access: 'page', handler: cancelExecutionPage },
  { method: 'POST', path: `/executions/${ID}/cancel`, access: 'action', handler: cancelAction },
  { method: 'POST', path: `/executions/${ID}/replay`, access: 'action', handler: replayAction },

  { method: 'GET', path: '/dead', access: 'page', handler: deadPage },
  { method: 'POST', path: '/dead/replay', access: 'action', handler: bulkReplayAction },
  { method: 'GET', path: '/workers', access: 'page', handler: workersPage },
  { method: 'GET', path: '/lanes', access: 'page', handler: lanesPage },
  { method: 'POST', path: '/lanes/:lane{short|long}/pause', access: 'action', handler: pauseLaneAction },
  { method: 'POST', path: '/lanes/:lane{short|long}/resume', access: 'action', handler: resumeLaneAction },
];
