/** The branch last viewed in each thread, kept in localStorage (`""` is the newest branch). */

const PREFIX = "pronghorn.branch.";
/** Most threads remembered; the oldest entries are dropped beyond this. */
const MAX_ENTRIES = 200;

function storage(): Storage | null {
  try {
    return window.localStorage;
  } catch {
    return null;
  }
}

export function loadBranch(threadId: string | null): string {
  if (!threadId) return "";
  try {
    return storage()?.getItem(PREFIX + threadId) ?? "";
  } catch {
    return "";
  }
}

export function saveBranch(threadId: string | null, branch: string): void {
  const store = storage();
  if (!threadId || !store) return;
  try {
    if (branch) store.setItem(PREFIX + threadId, branch);
    else store.removeItem(PREFIX + threadId);
    const keys: string[] = [];
    for (let i = 0; i < store.length; i++) {
      const key = store.key(i);
      if (key?.startsWith(PREFIX)) keys.push(key);
    }
    for (const key of keys.slice(0, Math.max(0, keys.length - MAX_ENTRIES))) store.removeItem(key);
  } catch {
    // Storage full or blocked: the branch is simply not remembered.
  }
}

/** "‹ 2 / 3 ›": the position of `branch` among `options` (1-based), or null when there is no choice. */
export function branchPosition(branch: string | undefined, options: readonly string[] | undefined): { index: number; count: number } | null {
  if (!options || options.length < 2 || branch === undefined) return null;
  const index = options.indexOf(branch);
  return index < 0 ? null : { index, count: options.length };
}
