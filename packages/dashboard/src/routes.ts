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
import type { RouteGuard } from './gate';
import { auditPage } from './pages/audit';
import { deadPage } from './pages/dead';
import { executionOutputStream, executionPage } from './pages/execution';
import { cancelExecutionPage } from './pages/execution-cancel';
import { executionsPage } from './pages/executions';
import { deleteJobPage, jobPage } from './pages/job';
import { backfillPage, backfillSubmit, editJobPage, editJobSubmit } from './pages/job-edit';
import { createJobSubmit, newJobPage, schedulePreviewFragment } from './pages/job-form';
import { jobsPage } from './pages/jobs';
import { lanesPage, pauseLaneAction, resumeLaneAction } from './pages/lanes';
import { loginPage, loginSubmit, logout } from './pages/login';
import { overviewPage } from './pages/overview';
import { workersPage } from './pages/workers';
import type { DashHandler } from './view';

/** `role`: the least role the route needs; `action`: what a change (or a refused attempt at it) is audited as. */
export interface DashboardRoute extends RouteGuard {
  method: 'GET' | 'POST';
  /** A Hono path; `:id` segments are numeric. */
  path: string;
  handler: DashHandler;
}

const ID = ':id{[0-9]+}';
const asset = (kind: 'css' | 'js') => (r: { c: Context }) => serveAsset(r.c, kind);

export const DASHBOARD_ROUTES: readonly DashboardRoute[] = [
  { method: 'GET', path: '/assets/dashboard.css', access: 'public', role: 'anyone', handler: asset('css') },
  { method: 'GET', path: '/assets/dashboard.js', access: 'public', role: 'anyone', handler: asset('js') },
  { method: 'GET', path: '/login', access: 'login', role: 'anyone', handler: loginPage },
  { method: 'POST', path: '/login', access: 'login', role: 'anyone', handler: loginSubmit },
  { method: 'POST', path: '/logout', access: 'action', role: 'read', handler: logout },

  { method: 'GET', path: '/', access: 'page', role: 'read', handler: overviewPage },
  { method: 'GET', path: '/jobs', access: 'page', role: 'read', handler: jobsPage },
  { method: 'GET', path: '/jobs/new', access: 'page', role: 'admin', handler: newJobPage },
  { method: 'GET', path: '/jobs/preview', access: 'fragment', role: 'admin', handler: schedulePreviewFragment },
  { method: 'POST', path: '/jobs', access: 'action', role: 'admin', action: 'job.create', handler: createJobSubmit },
  { method: 'GET', path: `/jobs/${ID}`, access: 'page', role: 'read', handler: jobPage },
  { method: 'GET', path: `/jobs/${ID}/edit`, access: 'page', role: 'admin', handler: editJobPage },
  {
    method: 'POST',
    path: `/jobs/${ID}/edit`,
    access: 'action',
    role: 'admin',
    action: 'job.update',
    handler: editJobSubmit,
  },
  { method: 'GET', path: `/jobs/${ID}/backfill`, access: 'page', role: 'operate', handler: backfillPage },
  {
    method: 'POST',
    path: `/jobs/${ID}/backfill`,
    access: 'action',
    role: 'operate',
    action: 'job.backfill',
    handler: backfillSubmit,
  },
  { method: 'GET', path: `/jobs/${ID}/delete`, access: 'page', role: 'admin', handler: deleteJobPage },
  {
    method: 'POST',
    path: `/jobs/${ID}/delete`,
    access: 'action',
    role: 'admin',
    action: 'job.delete',
    handler: deleteAction,
  },
  {
    method: 'POST',
    path: `/jobs/${ID}/trigger`,
    access: 'action',
    role: 'operate',
    action: 'job.trigger',
    handler: triggerAction,
  },
  {
    method: 'POST',
    path: `/jobs/${ID}/pause`,
    access: 'action',
    role: 'operate',
    action: 'job.pause',
    handler: pauseAction,
  },
  {
    method: 'POST',
    path: `/jobs/${ID}/resume`,
    access: 'action',
    role: 'operate',
    action: 'job.resume',
    handler: resumeAction,
  },

  { method: 'GET', path: '/executions', access: 'page', role: 'read', handler: executionsPage },
  { method: 'GET', path: `/executions/${ID}`, access: 'page', role: 'read', handler: executionPage },
  { method: 'GET', path: `/executions/${ID}/output`, access: 'fragment', role: 'read', handler: executionOutputStream },
  { method: 'GET', path: `/executions/${ID}/cancel`, access: 'page', role: 'operate', handler: cancelExecutionPage },
  {
    method: 'POST',
    path: `/executions/${ID}/cancel`,
    access: 'action',
    role: 'operate',
    action: 'execution.cancel',
    handler: cancelAction,
  },
  {
    method: 'POST',
    path: `/executions/${ID}/replay`,
    access: 'action',
    role: 'operate',
    action: 'execution.replay',
    handler: replayAction,
  },

  { method: 'GET', path: '/dead', access: 'page', role: 'read', handler: deadPage },
  {
    method: 'POST',
    path: '/dead/replay',
    access: 'action',
    role: 'operate',
    action: 'execution.replay',
    handler: bulkReplayAction,
  },
  { method: 'GET', path: '/audit', access: 'page', role: 'admin', action: 'audit.read', handler: auditPage },
  { method: 'GET', path: '/workers', access: 'page', role: 'read', handler: workersPage },
  { method: 'GET', path: '/lanes', access: 'page', role: 'read', handler: lanesPage },
  {
    method: 'POST',
    path: '/lanes/:lane{short|long}/pause',
    access: 'action',
    role: 'operate',
    action: 'lane.pause',
    handler: pauseLaneAction,
  },
  {
    method: 'POST',
    path: '/lanes/:lane{short|long}/resume',
    access: 'action',
    role: 'operate',
    action: 'lane.resume',
    handler: resumeLaneAction,
  },
];
