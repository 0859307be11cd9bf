import { Suspense, useCallback, useEffect, useState } from "react";
import { useGateway } from "../api/gateway";
import { useGatewayStatus } from "../hooks/useGatewayStatus";
import { useAgents } from "../hooks/useAgents";
import { useModels } from "../hooks/useModels";
import type { Go } from "../hooks/useRoute";
import { useTheme } from "../hooks/useTheme";
import { useThreadLookup } from "../hooks/useThreadLookup";
import { useThreads } from "../hooks/useThreads";
import type { Route } from "../lib/route";
import type { Session } from "../lib/session";
import type { SessionActions } from "./auth/AuthGate";
import { ExtensionsNav } from "./ExtensionsNav";
import { PageLoading } from "./PageLoading";
import {
  AgentsPage,
  ChannelsPage,
  ChatView,
  KeysPage,
  McpPage,
  MemoryPage,
  PasswordPage,
  SkillsPage,
  ToolsPage,
  UsersPage,
} from "./pages";
import { Icon } from "./Icon";
import { SettingsLayout } from "./settings/SettingsLayout";
import { Sidebar } from "./Sidebar";
import { StatusBanner } from "./StatusBanner";
import { ThemeToggle } from "./ThemeToggle";
import { ThreadNotFound } from "./ThreadNotFound";
import { UserMenu } from "./UserMenu";

interface Props {
  session: Session;
  actions: SessionActions;
  route: Route;
  go: Go;
}

/** The signed-in app: sidebar (chats, user menu), and the chat or a settings page. */
export function Workspace({ session, actions, route, go }: Props) {
  const { client, fetch } = useGateway();
  const [theme, cycleTheme] = useTheme();
  const status = useGatewayStatus(fetch);
  const models = useModels(fetch);
  const agents = useAgents();
  const threads = useThreads(client);
  const [sidebarOpen, setSidebarOpen] = useState(false);

  const threadId = route.page === "chat" ? route.threadId : null;
  const lookup = useThreadLookup(client, threadId, threads.threads);
  const { markKnown } = lookup;
  // The chat navigates to threads it has just created: those exist, no check needed.
  const navigate = useCallback(
    (id: string | null, opts?: { replace?: boolean }) => {
      if (id) markKnown(id);
      go({ page: "chat", threadId: id }, opts);
    },
    [go, markKnown],
  );
  const open = (id: string | null) => {
    navigate(id);
    setSidebarOpen(false);
  };
  const openSidebar = () => setSidebarOpen(true);
  // The phone drawer closes on Escape, like a menu.
  useEffect(() => {
    if (!sidebarOpen) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) setSidebarOpen(false);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [sidebarOpen]);
  // auth.mode none: the local user is the admin.
  const isAdmin = !session.user || session.user.role === "admin";

  const main = (() => {
    if (!session.user && (route.page === "keys" || route.page === "users" || route.page === "password")) {
      return (
        <SettingsLayout title="Accounts are off" onOpenSidebar={openSidebar}>
          <p className="settings-note">
            This gateway runs with <code>auth.mode: none</code>: there are no accounts, passwords or API keys. Everyone who
            can reach it is the local user.
          </p>
        </SettingsLayout>
      );
    }
    switch (route.page) {
      case "keys":
        return <KeysPage onOpenSidebar={openSidebar} />;
      case "users":
        return <UsersPage me={session.user} onOpenSidebar={openSidebar} />;
      case "password":
        return <PasswordPage onOpenSidebar={openSidebar} onChanged={actions.reload} />;
      case "mcp":
        return <McpPage onOpenSidebar={openSidebar} />;
      case "skills":
        return <SkillsPage onOpenSidebar={openSidebar} />;
      case "tools":
        return <ToolsPage onOpenSidebar={openSidebar} />;
      case "agents":
        return (
          <AgentsPage
            agents={agents}
            models={models.models}
            onOpenSidebar={openSidebar}
            onChat={(name) => {
              agents.select(name);
              navigate(null);
            }}
          />
        );
      case "memory":
        return <MemoryPage onOpenSidebar={openSidebar} />;
      case "channels":
        return <ChannelsPage isAdmin={isAdmin} onOpenSidebar={openSidebar} />;
      default:
        if (lookup.availability === "checking" || lookup.availability === "missing") {
          return (
            <ThreadNotFound
              checking={lookup.availability === "checking"}
              onNewChat={() => navigate(null)}
              onOpenSidebar={openSidebar}
            />
          );
        }
        return (
          <ChatView
            client={client}
            threadId={threadId}
            navigate={navigate}
            models={models}
            agents={agents}
            onThreadsChanged={threads.refresh}
            onOpenSidebar={openSidebar}
          />
        );
    }
  })();

  return (
    <div className={`app${sidebarOpen ? " sidebar-open" : ""}`}>
      <a className="skip-link" href="#composer-input">Skip to message box</a>
      <StatusBanner status={status} />
      <div className="app-body">
        <Sidebar
          threads={threads}
          activeThreadId={threadId}
          onOpen={open}
          nav={
            <ExtensionsNav
              current={route.page}
              onNavigate={(page) => {
                go({ page });
                setSidebarOpen(false);
              }}
            />
          }
          footer={
            <>
              <UserMenu
                session={session}
                onNavigate={(page) => {
                  go({ page });
                  setSidebarOpen(false);
                }}
                onSignedOut={actions.signedOut}
              />
              {isAdmin && (
                <button
                  type="button"
                  className="chip-button"
                  onClick={() => {
                    go({ page: "mcp" });
                    setSidebarOpen(false);
                  }}
                >
                  MCP servers
                </button>
              )}
              <button
                type="button"
                className="icon-button"
                aria-label="Memory"
                title="What the agent remembers about you"
                aria-current={route.page === "memory" ? "page" : undefined}
                onClick={() => {
                  go({ page: "memory" });
                  setSidebarOpen(false);
                }}
              >
                <Icon name="memory" />
              </button>
              <ThemeToggle preference={theme} onCycle={cycleTheme} />
            </>
          }
        />
        {sidebarOpen && (
          <button type="button" className="scrim" aria-label="Close chat list" onClick={() => setSidebarOpen(false)} />
        )}
        <Suspense fallback={<PageLoading />}>{main}</Suspense>
      </div>
    </div>
  );
}
