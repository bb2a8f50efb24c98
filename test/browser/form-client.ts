/**
 * A minimal browser over `app.request()` for in-process dashboard tests: a cookie jar, urlencoded form posts, the
 * CSRF token of a page, and sign-in. No JavaScript, no redirects followed (tests look at them).
 */
interface FormResponse {
  status: number;
  headers: Headers;
  text: string;
}

export interface FormClient {
  jar: Map<string, string>;
  /** Every Set-Cookie line received, in order. */
  setCookies: string[];
  request(
    method: string,
    path: string,
    options?: { form?: Record<string, string | string[]>; headers?: Record<string, string> },
  ): Promise<FormResponse>;
  /** The CSRF token the forms of the page at `path` carry. */
  csrf(path?: string): Promise<string>;
  /** Posts `key` to the sign-in form. */
  signIn(key: string): Promise<FormResponse>;
}

export function formClient(
  app: { request(path: string, init: RequestInit): Response | Promise<Response> },
  headers: Record<string, string> = {},
): FormClient {
  const jar = new Map<string, string>();
  const setCookies: string[] = [];
  const client: FormClient = {
    jar,
    setCookies,
    async request(method, path, options = {}) {
      const hs: Record<string, string> = { ...headers, ...options.headers };
      if (jar.size > 0) hs.Cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
      let body: string | undefined;
      if (options.form) {
        const params = new URLSearchParams();
        for (const [k, v] of Object.entries(options.form)) for (const item of [v].flat()) params.append(k, item);
        body = params.toString();
        hs['Content-Type'] = 'application/x-www-form-urlencoded';
      }
      const res = await app.request(path, { method, headers: hs, body });
      for (const line of res.headers.getSetCookie()) {
        setCookies.push(line);
        const pair = line.split(';')[0]!;
        const name = pair.slice(0, pair.indexOf('='));
        if (/max-age=0/i.test(line)) jar.delete(name);
        else jar.set(name, pair.slice(pair.indexOf('=') + 1));
      }
      return { status: res.status, headers: res.headers, text: await res.text() };
    },
    async csrf(path = '/jobs/new') {
      const page = await client.request('GET', path);
      const match = /name="_csrf" value="([^"]+)"/.exec(page.text);
      if (!match) throw new Error(`no CSRF token on ${path} (status ${page.status})`);
      return match[1]!;
    },
    async signIn(key) {
      const token = await client.csrf('/login');
      return client.request('POST', '/login', { form: { key, _csrf: token, next: '/' } });
    },
  };
  return client;
}

/** Undoes the HTML escaping hono/jsx applies to text (`&amp;`, `&lt;`, `&gt;`, `&quot;`, `&#39;`). */
export function unescapeHtml(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!,
  );
}
