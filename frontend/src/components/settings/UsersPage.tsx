import { useState, type FormEvent } from "react";
import { createUser, deleteUser, displayName, listUsers, updateUser, type Role, type User, type UserPatch } from "../../api/auth";
import { useGateway } from "../../api/gateway";
import { useResource } from "../../hooks/useResource";
import { formatWhen } from "../../lib/format";
import { ErrorNotice } from "../ErrorNotice";
import { SettingsLayout } from "./SettingsLayout";

interface Props {
  me: User | null;
  onOpenSidebar: () => void;
}

/** Admins: every account, add one, promote/demote, disable/enable. */
export function UsersPage({ me, onOpenSidebar }: Props) {
  const { fetch } = useGateway();
  const isAdmin = me?.role === "admin";
  const { data: users, setData: setUsers, error, setError, act } = useResource(listUsers, "users", { enabled: isAdmin });
  const [notice, setNotice] = useState<string | null>(null);
  const [form, setForm] = useState({ username: "", display_name: "", password: "", role: "user" as Role });
  const [busy, setBusy] = useState(false);

  if (!isAdmin) {
    return (
      <SettingsLayout title="Users" onOpenSidebar={onOpenSidebar}>
        <p className="settings-note">Only administrators can manage users.</p>
      </SettingsLayout>
    );
  }

  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    setNotice(null);
    await act("create the user", async () => {
      const name = form.display_name.trim();
      const user = await createUser(fetch, {
        username: form.username.trim(),
        password: form.password,
        role: form.role,
        ...(name ? { display_name: name } : {}),
      });
      setUsers((prev) => [...(prev ?? []), user]);
      setForm({ username: "", display_name: "", password: "", role: "user" });
      setNotice(`Created ${user.username}.`);
    });
    setBusy(false);
  };

  const change = async (user: User, patch: UserPatch) => {
    setError(null);
    setNotice(null);
    await act(`update ${user.username}`, async () => {
      const updated = await updateUser(fetch, user.id, patch);
      setUsers((prev) => prev?.map((u) => (u.id === updated.id ? updated : u)) ?? null);
    });
  };

  const remove = async (user: User) => {
    const question = `Delete ${user.username} and all of their chats, files, memory, keys and schedules? This cannot be undone.`;
    if (!window.confirm(question)) return;
    setError(null);
    setNotice(null);
    await act(`delete ${user.username}`, async () => {
      const done = await deleteUser(fetch, user.id);
      setUsers((prev) => prev?.filter((u) => u.id !== user.id) ?? null);
      setNotice(`Deleted ${user.username} (${done.removed.threads ?? 0} chats).`);
    });
  };

  return (
    <SettingsLayout
      title="Users"
      onOpenSidebar={onOpenSidebar}
      intro="Everyone who can sign in to this gateway. Each user sees only their own chats, files and keys; a disabled user is signed out at once."
    >
      {error && <ErrorNotice message={error} onDismiss={() => setError(null)} />}
      {notice && <p className="ok-note" role="status">{notice}</p>}

      <section className="settings-card" aria-labelledby="new-user-title">
        <h2 id="new-user-title">Add a user</h2>
        <form className="grid-form" onSubmit={(e) => void create(e)}>
          <label className="field">
            <span>Username</span>
            <input
              value={form.username}
              onChange={(e) => setForm({ ...form, username: e.target.value })}
              autoCapitalize="none"
              spellCheck={false}
              autoComplete="off"
              required
            />
          </label>
          <label className="field">
            <span>Display name <em>(optional)</em></span>
            <input value={form.display_name} onChange={(e) => setForm({ ...form, display_name: e.target.value })} autoComplete="off" />
          </label>
          <label className="field">
            <span>Password</span>
            <input
              type="password"
              value={form.password}
              onChange={(e) => setForm({ ...form, password: e.target.value })}
              autoComplete="new-password"
              required
            />
          </label>
          <label className="field">
            <span>Role</span>
            <select value={form.role} onChange={(e) => setForm({ ...form, role: e.target.value === "admin" ? "admin" : "user" })}>
              <option value="user">User</option>
              <option value="admin">Admin</option>
            </select>
          </label>
          <div className="form-actions">
            <button type="submit" className="primary" disabled={busy || !form.username.trim() || !form.password}>
              {busy ? "Adding…" : "Add user"}
            </button>
          </div>
        </form>
      </section>

      <section className="settings-card" aria-labelledby="users-title">
        <h2 id="users-title">All users</h2>
        {users === null && !error && <p className="settings-note">Loading…</p>}
        {users && (
          <div className="table-wrap">
            <table className="settings-table">
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Role</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col"><span className="visually-hidden">Actions</span></th>
                </tr>
              </thead>
              <tbody>
                {users.map((u) => {
                  const self = u.id === me?.id;
                  return (
                    <tr key={u.id} data-testid="user-row" className={u.disabled ? "muted-row" : undefined}>
                      <td>
                        <span className="cell-main">{displayName(u)}</span>
                        <span className="cell-sub">@{u.username}{self ? " · you" : ""}</span>
                      </td>
                      <td><span className={`badge${u.role === "admin" ? " badge-accent" : ""}`}>{u.role === "admin" ? "Admin" : "User"}</span></td>
                      <td>{u.disabled ? <span className="badge badge-danger">Disabled</span> : <span className="badge">Active</span>}</td>
                      <td>{formatWhen(u.created_at)}</td>
                      <td className="row-actions">
                        {!self && (
                          <>
                            <button
                              type="button"
                              className="chip-button"
                              onClick={() => void change(u, { role: u.role === "admin" ? "user" : "admin" })}
                            >
                              {u.role === "admin" ? "Make user" : "Make admin"}
                            </button>
                            <button
                              type="button"
                              className={`chip-button${u.disabled ? "" : " danger"}`}
                              onClick={() => void change(u, { disabled: !u.disabled })}
                            >
                              {u.disabled ? "Enable" : "Disable"}
                            </button>
                            <button type="button" className="chip-button danger" onClick={() => void remove(u)}>
                              Delete
                            </button>
                          </>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
      </section>
    </SettingsLayout>
  );
}
