/**
 * Accessibility checks for the browser tests: axe-core run inside the page, and the focus ring measured against what
 * is behind it. axe is evaluated through the DevTools protocol (page.evaluate), which the page's Content-Security-
 * Policy does not govern, so the tests keep the strict CSP (no bypassCSP) and still run axe.
 */
import type { Page } from 'playwright-core';
import axe from 'axe-core';

/** WCAG 2.0 and 2.1, levels A and AA. */
const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

export interface AxeFinding {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/** Every WCAG 2.1 AA violation axe finds on the page as it is now (an empty list when there is none). */
export async function axeViolations(page: Page): Promise<AxeFinding[]> {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.evaluate(axe.source);
  return page.evaluate(async (tags) => {
    const run = (globalThis as any).axe.run as (context: unknown, options: unknown) => Promise<any>;
    const result = await run((globalThis as any).document, {
      runOnly: { type: 'tag', values: tags },
      resultTypes: ['violations'],
    });
    return result.violations.map((v: any) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n: any) => `${n.target.join(' ')}: ${n.failureSummary}`),
    }));
  }, WCAG_AA);
}

/** WCAG relative luminance contrast of two CSS rgb()/rgba() colours (alpha ignored: callers pass opaque ones). */
export function contrast(a: string, b: string): number {
  const lum = (css: string) => {
    const [r, g, bl] = (css.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

export interface FocusRing {
  element: string;
  outline: string;
  width: number;
  behind: string;
}

/**
 * The focus ring of the focused element: its outline colour and width, and the first opaque background behind the
 * ring (the ring is drawn outside the element, so that is the parent's, or further up).
 */
export async function focusRing(page: Page): Promise<FocusRing> {
  return page.evaluate(() => {
    const g = globalThis as any;
    const el = g.document.activeElement;
    const style = g.getComputedStyle(el);
    let node = el.parentElement;
    let behind = 'rgb(255, 255, 255)';
    while (node) {
      const bg = g.getComputedStyle(node).backgroundColor as string;
      if (bg && bg !== 'transparent' && !/rgba\([^)]*,\s*0\)$/.test(bg)) {
        behind = bg;
        break;
      }
      node = node.parentElement;
    }
    const label = `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''} "${(el.textContent ?? '').trim().slice(0, 30)}"`;
    return {
      element: label,
      outline: style.outlineStyle === 'none' ? 'none' : style.outlineColor,
      width: parseFloat(style.outlineWidth),
      behind,
    };
  });
}
