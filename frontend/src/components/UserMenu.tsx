import { useEffect, useId, useRef, useState } from "react";
import { displayName, logout } from "../api/auth";
import { useGateway } from "../api/gateway";
import { HttpError } from "../api/http";
import { describeError } from "../lib/errors";
import type { SettingsPage } from "../lib/route";
import type { Session } from "../lib/session";

interface Props {
  session: Session;
  onNavigate: (page: SettingsPage) => void;
  onSignedOut: () => void;
}

function initials(name: string): string {
  const parts = name.trim().split(/\s+/).filter(Boolean);
  const letters = parts.length > 1 ? `${parts[0]?.[0] ?? ""}${parts[1]?.[0] ?? ""}` : name.slice(0, 2);
  return letters.toUpperCase() || "?";
}

/** Who is signed in, and their account actions: API keys, users (admins), password, log out. */
export function UserMenu({ session, onNavigate, onSignedOut }: Props) {
  const { fetch } = useGateway();
  const [open, setOpen] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const root = useRef<HTMLDivElement>(null);
  const menuId = useId();

  useEffect(() => {
    if (!open) return;
    const onDown = (e: MouseEvent) => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape") {
        e.preventDefault();
        setOpen(false);
        // Back to the button, not lost on <body> with the menu item that had it.
        root.current?.querySelector<HTMLButtonElement>(".user-button")?.focus();
      }
    };
    document.addEventListener("mousedown", onDown);
    document.addEventListener("keydown", onKey);
    return () => {
      document.removeEventListener("mousedown", onDown);
      document.removeEventListener("keydown", onKey);
    };
  }, [open]);

  const user = session.user;
  if (!user) {
    return (
      <span className="user-chip" title="auth.mode: none — everyone who can reach the gateway is this user">
        <span className="avatar" aria-hidden="true">L</span>
        <span className="user-name">Local user</span>
      </span>
    );
  }

  const name = displayName(user);
  if (session.mode !== "local") {
    // auth.mode custom: the deployment's auth owns accounts, keys and signing out.
    return (
      <span className="user-chip" title="Signed in through the gateway's custom auth">
        <span className="avatar" aria-hidden="true">{initials(name)}</span>
        <span className="user-text">
          <span className="user-name">{name}</span>
          <span className="user-role">{user.role === "admin" ? "Admin" : "User"}</span>
        </span>
      </span>
    );
  }
  const pick = (page: SettingsPage) => {
    setOpen(false);
    onNavigate(page);
  };
  const signOut = async () => {
    setOpen(false);
    try {
      await logout(fetch);
    } catch (e) {
      // A session that is already gone is as good as logged out.
      if (!(e instanceof HttpError && e.status === 401)) {
        setError(`Could not log out: ${describeError(e)}`);
        return;
      }
    }
    onSignedOut();
  };

  return (
    <div className="user-menu" ref={root}>
      <button
        type="button"
        className="user-chip user-button"
        aria-haspopup="menu"
        aria-expanded={open}
        aria-controls={open ? menuId : undefined}
        onClick={() => setOpen((o) => !o)}
      >
        {/* Named by its text ("Account: Ada Admin, Admin"): an aria-label would not contain the
            visible initials and role, which axe (label-content-name-mismatch) flags. */}
        <span className="visually-hidden">Account: </span>
        <span className="avatar" aria-hidden="true">{initials(name)}</span>
        <span className="user-text">
          <span className="user-name">{name}</span>
          <span className="user-role">
            <span className="visually-hidden">, </span>
            {user.role === "admin" ? "Admin" : "User"}
          </span>
        </span>
      </button>
      {open && (
        <div className="popover user-popover" role="menu" id={menuId} aria-label="Account">
          <div className="menu-header">
            <strong>{name}</strong>
            <span>@{user.username}</span>
          </div>
          <button type="button" role="menuitem" className="menu-item" onClick={() => pick("memory")}>
            Memory
          </button>
          <button type="button" role="menuitem" className="menu-item" onClick={() => pick("keys")}>
            API keys
          </button>
          {user.role === "admin" && (
            <button type="button" role="menuitem" className="menu-item" onClick={() => pick("users")}>
              Users
            </button>
          )}
          <button type="button" role="menuitem" className="menu-item" onClick={() => pick("password")}>
            Change password
          </button>
          <button type="button" role="menuitem" className="menu-item" onClick={() => void signOut()}>
            Log out
          </button>
        </div>
      )}
      {error && (
        <p className="user-menu-error error-text" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
