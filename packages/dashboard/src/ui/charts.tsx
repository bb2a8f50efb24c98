/**
 * @module dashboard/ui/charts — the last hour per minute as inline SVG bars: throughput (stacked by outcome) and
 * failure rate. The caption carries the numbers in words; each bar has a tooltip with its minute's counts.
 */
import type { MinuteOutcomes } from '@jobs/store';
import type { FC } from 'hono/jsx';
import { formatPercent } from '../format';

const W = 600;
const H = 100;

const hhmm = (d: Date) => d.toISOString().slice(11, 16);

const Frame: FC<{ id: string; caption: string; top: string; minutes: MinuteOutcomes[]; children: unknown }> = ({
  id,
  caption,
  top,
  minutes,
  children,
}) => (
  <figure class="chart">
    <div class="chart-top muted">
      <small>{top}</small>
    </div>
    <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-labelledby={id}>
      <line class="axis" x1="0" y1={H - 0.5} x2={W} y2={H - 0.5} />
      {children as never}
    </svg>
    <div class="chart-axis muted">
      <small>{minutes[0] ? `${hhmm(minutes[0].minute)} UTC` : ''}</small>
      <small>now</small>
    </div>
    <figcaption id={id}>{caption}</figcaption>
  </figure>
);

export const ThroughputChart: FC<{ minutes: MinuteOutcomes[] }> = ({ minutes }) => {
  const totals = minutes.map((m) => m.succeeded + m.failed + m.dead);
  const max = Math.max(1, ...totals);
  const sum = totals.reduce((a, b) => a + b, 0);
  const bad = minutes.reduce((a, m) => a + m.failed + m.dead, 0);
  const step = W / Math.max(1, minutes.length);
  const caption = `Finished attempts per minute, last hour: ${sum} in total (${(sum / Math.max(1, minutes.length)).toFixed(1)} a minute), ${bad} failed or dead.`;
  return (
    <Frame id="chart-throughput" caption={caption} top={`max ${max} a minute`} minutes={minutes}>
      {minutes.map((m, i) => {
        let y = H;
        const bar = (n: number, cls: string) => {
          if (n === 0) return null;
          const h = (n / max) * (H - 4);
          y -= h;
          return (
            <rect
              class={cls}
              x={(i * step + 0.5).toFixed(2)}
              y={y.toFixed(2)}
              width={Math.max(1, step - 1).toFixed(2)}
              height={h.toFixed(2)}
            />
          );
        };
        return (
          <g>
            <title>{`${hhmm(m.minute)} UTC: ${m.succeeded} succeeded, ${m.failed} failed, ${m.dead} dead`}</title>
            {bar(m.succeeded, 'bar-ok')}
            {bar(m.failed, 'bar-failed')}
            {bar(m.dead, 'bar-dead')}
          </g>
        );
      })}
    </Frame>
  );
};

export const FailureRateChart: FC<{ minutes: MinuteOutcomes[] }> = ({ minutes }) => {
  const step = W / Math.max(1, minutes.length);
  const total = minutes.reduce((a, m) => a + m.succeeded + m.failed + m.dead, 0);
  const bad = minutes.reduce((a, m) => a + m.failed + m.dead, 0);
  const caption = `Share of attempts per minute that failed or died, last hour: ${formatPercent(bad, total)} overall${total === 0 ? ' (nothing finished)' : ''}.`;
  return (
    <Frame id="chart-failures" caption={caption} top="100%" minutes={minutes}>
      {minutes.map((m, i) => {
        const n = m.succeeded + m.failed + m.dead;
        if (n === 0) return null;
        const rate = (m.failed + m.dead) / n;
        const h = Math.max(rate > 0 ? 2 : 0, rate * (H - 4));
        return (
          <g>
            <title>{`${hhmm(m.minute)} UTC: ${m.failed + m.dead} of ${n} failed (${formatPercent(m.failed + m.dead, n)})`}</title>
            {h > 0 && (
              <rect
                class="bar-rate"
                x={(i * step + 0.5).toFixed(2)}
                y={(H - h).toFixed(2)}
                width={Math.max(1, step - 1).toFixed(2)}
                height={h.toFixed(2)}
              />
            )}
          </g>
        );
      })}
    </Frame>
  );
};

export const ChartLegend: FC = () => (
  <ul class="legend" aria-hidden="true">
    <li>
      <span class="swatch ok"></span>succeeded
    </li>
    <li>
      <span class="swatch failed"></span>failed (retried)
    </li>
    <li>
      <span class="swatch dead"></span>dead
    </li>
  </ul>
);
