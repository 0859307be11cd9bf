/** Shown in the main area while a page's code loads (a split chunk, usually a few ms). */
export function PageLoading() {
  return (
    <main className="settings-main page-loading" aria-busy="true">
      <p className="settings-note">Loading…</p>
    </main>
  );
}
