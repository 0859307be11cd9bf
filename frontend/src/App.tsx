import { useMemo, useState } from "react";
import { createClient } from "./api/client";
import { ChatView } from "./components/ChatView";
import { Sidebar } from "./components/Sidebar";
import { StatusBanner } from "./components/StatusBanner";
import { ThemeToggle } from "./components/ThemeToggle";
import { useGatewayStatus } from "./hooks/useGatewayStatus";
import { useModels } from "./hooks/useModels";
import { useRoute } from "./hooks/useRoute";
import { useTheme } from "./hooks/useTheme";
import { useThreads } from "./hooks/useThreads";

export function App() {
  const client = useMemo(() => createClient(), []);
  const [threadId, navigate] = useRoute();
  const [theme, cycleTheme] = useTheme();
  const status = useGatewayStatus();
  const models = useModels();
  const threads = useThreads(client);
  const [sidebarOpen, setSidebarOpen] = useState(false);

  const open = (id: string | null) => {
    navigate(id);
    setSidebarOpen(false);
  };

  return (
    <div className={`app${sidebarOpen ? " sidebar-open" : ""}`}>
      <a className="skip-link" href="#composer-input">Skip to message box</a>
      <StatusBanner status={status} />
      <div className="app-body">
        <Sidebar
          threads={threads}
          activeThreadId={threadId}
          onOpen={open}
          footer={<ThemeToggle preference={theme} onCycle={cycleTheme} />}
        />
        {sidebarOpen && (
          <button type="button" className="scrim" aria-label="Close chat list" onClick={() => setSidebarOpen(false)} />
        )}
        <ChatView
          client={client}
          threadId={threadId}
          navigate={navigate}
          models={models}
          onThreadsChanged={threads.refresh}
          onOpenSidebar={() => setSidebarOpen(true)}
        />
      </div>
    </div>
  );
}
