// Calls the server's admin API with the token the user typed in; the console can do what the token may.
const TOKEN = 'boxline-console-token';

export const session = { token: sessionStorage.getItem(TOKEN), me: null };

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function signIn(token) {
  session.token = token;
  if (token) sessionStorage.setItem(TOKEN, token); else sessionStorage.removeItem(TOKEN);
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? '?' + s : '';
}

export async function api(path, { method = 'GET', body, params } = {}) {
  const headers = { Accept: 'application/json' };
  if (session.token) headers.Authorization = 'Bearer ' + session.token;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const res = await fetch(path + query(params), {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = { message: text }; }
  }
  if (!res.ok) {
    throw new ApiError(res.status, data && data.error, (data && data.message) || res.statusText);
  }
  return data;
}

// Every item of a list the server pages by name (topics, subscriptions): follows `next` to the end.
export async function apiAll(path, list) {
  const all = [];
  let after;
  do {
    const page = await api(path, { params: { limit: 1000, after } });
    all.push(...page[list]);
    after = page.next;
  } while (after);
  return all;
}

export const enc = (s) => encodeURIComponent(s);
export const topicPath = (t) => '/v1/topics/' + enc(t);
export const subPath = (s) => '/v1/subscriptions/' + enc(s);

// What the signed-in role may do; the server checks again on every call.
export function may(action) {
  const role = session.me && session.me.role;
  if (role === 'admin') return true;
  if (action === 'read') return role === 'operator' || role === 'viewer';
  if (action === 'redrive') return role === 'operator';
  return false;
}
