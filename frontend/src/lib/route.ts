const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `/t/<uuid>` → the thread id; anything else → null (a new chat). */
export function threadIdFromPath(pathname: string): string | null {
  const match = /^\/t\/([^/]+)\/?$/.exec(pathname);
  if (!match || !match[1]) return null;
  const id = decodeURIComponent(match[1]);
  return UUID_RE.test(id) ? id : null;
}

export function pathForThread(threadId: string | null): string {
  return threadId ? `/t/${encodeURIComponent(threadId)}` : "/";
}
