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
    // Ranges, steps and lists.
    ['*/15 9-17 * * mon-fri', 'every 15 minutes from 09:00 to 17:45 on weekdays'],
    ['*/15 9-17 * * *', 'every 15 minutes from 09:00 to 17:45'],
    ['*/10 8 * * *', 'every 10 minutes from 08:00 to 08:50'],
    ['5-10 9 * * *', 'every minute from 09:05 to 09:10'],
    ['1-10/2 * * * *', 'every 2 minutes from :01 to :09 of every hour'],
    ['*/7 * * * *', 'every 7 minutes from :00 to :56 of every hour'],
    ['*/5 * * * 1-5', 'every 5 minutes on weekdays'],
    ['0 */5 * * *', 'every 5 hours from 00:00 to 20:00'],
    ['30 8-18/2 * * *', 'every 2 hours from 08:30 to 18:30'],
    ['0,30 9-17 * * 1-5', 'every hour at :00 and :30, from 09:00 to 17:30 on weekdays'],
    ['0 9 * * mon-wed,fri', 'at 09:00 on Monday to Wednesday and Friday'],
    ['0 9 * * 5-7', 'at 09:00 Friday to Sunday'],
    ['0 9 * * 1,2,3,4,5', 'at 09:00 on weekdays'],
    ['0 9 * * 0-6', 'at 09:00 every day'],
    ['0 9 1-7 * *', 'at 09:00 on the 1st to 7th of every month'],
    ['0 0 1 1,4,7,10 *', 'at 00:00 on the 1st of January, April, July and October'],
    ['0 0 1 */3 *', 'at 00:00 on the 1st of January, April, July and October'],
    ['0 9 * 6-8 1-5', 'at 09:00 on weekdays from June to August'],
    ['0 9 * jun-aug *', 'at 09:00 every day from June to August'],
    ['0 9 15 jun-aug *', 'at 09:00 on the 15th of every month from June to August'],
    ['0 0 * * */2', null],
    ['*/15 */2 * * *', null],
    ['0-29 9-17 * * *', null],
    ['0 1,2,3,4,5,6,7 * * *', null],
  ];
  it.each(cases)('%s -> %s', (expr, words) => {
    expect(parseCron(expr).ok, `${expr} is valid`).toBe(true);
    expect(describeCron(expr)).toBe(words);
  });
});
