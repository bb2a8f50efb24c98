import { parseCron } from '@jobs/core';
import { describe, expect, it } from 'vitest';
import { describeCron } from './cron-words';

describe('describeCron', () => {
  const cases: [string, string | null][] = [
    ['* * * * *', 'every minute'],
    ['*/1 * * * *', 'every minute'],
    ['*/5 * * * *', 'every 5 minutes'],
    ['0 * * * *', 'every hour'],
    ['@hourly', 'every hour'],
    ['15 * * * *', 'every hour at :15'],
    ['0,30 * * * *', 'every hour at :00 and :30'],
    ['0 */2 * * *', 'every 2 hours'],
    ['10 */6 * * *', 'every 6 hours at :10'],
    ['30 2 * * *', 'at 02:30 every day'],
    ['@daily', 'at 00:00 every day'],
    ['@midnight', 'at 00:00 every day'],
    ['0 9,17 * * *', 'at 09:00 and 17:00 every day'],
    ['0 9 * * 1-5', 'at 09:00 on weekdays'],
    ['0 9 * * MON-FRI', 'at 09:00 on weekdays'],
    ['0 10 * * 6,0', 'at 10:00 on weekends'],
    ['0 8 * * 1', 'at 08:00 on Monday'],
    ['0 8 * * 1,3,5', 'at 08:00 on Monday, Wednesday and Friday'],
    ['0 8 * * 2-4', 'at 08:00 Tuesday to Thursday'],
    ['@weekly', 'at 00:00 on Sunday'],
    ['0 0 * * 7', 'at 00:00 on Sunday'],
    ['0 6 1 * *', 'at 06:00 on the 1st of every month'],
    ['0 6 1,15 * *', 'at 06:00 on the 1st and 15th of every month'],
    ['0 0 22 * *', 'at 00:00 on the 22nd of every month'],
    ['@monthly', 'at 00:00 on the 1st of every month'],
    ['0 0 1 1 *', 'at 00:00 on 1 January'],
    ['@yearly', 'at 00:00 on 1 January'],
    ['0 12 * 7 *', 'at 12:00 every day in July'],
    ['0 9-17 * * 1-5', 'every hour from 09:00 to 17:00 on weekdays'],
    ['*/10 * * * * *', 'every 10 seconds'],
    ['* * * * * *', 'every second'],
    ['0 30 2 * * *', 'at 02:30 every day'],
    // Shapes with no simple wording fall back to the expression itself.
    ['5 4 * * 0 ', 'at 04:05 on Sunday'],
    ['0 0 13 * 5', null],
    ['15 10 * * * *', null],
    ['1-10/2 * * * *', null],
    ['0 1,2,3,4,5,6,7 * * *', null],
  ];
  it.each(cases)('%s -> %s', (expr, words) => {
    expect(parseCron(expr).ok, `${expr} is valid`).toBe(true);
    expect(describeCron(expr)).toBe(words);
  });
});
