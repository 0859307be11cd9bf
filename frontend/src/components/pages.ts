import { lazy } from "react";

/*
 * The pages of the workspace, each loaded on first use (its own chunk), so the app's first
 * download is the shell: sign-in, sidebar and routing. Named exports keep the call sites as
 * they were (`<ChatView .../>`); React.lazy needs a default, hence the small adapters.
 */

export const ChatView = lazy(() => import("./ChatView").then((m) => ({ default: m.ChatView })));
export const AgentsPage = lazy(() => import("./settings/AgentsPage").then((m) => ({ default: m.AgentsPage })));
export const ChannelsPage = lazy(() => import("./settings/ChannelsPage").then((m) => ({ default: m.ChannelsPage })));
export const KeysPage = lazy(() => import("./settings/KeysPage").then((m) => ({ default: m.KeysPage })));
export const McpPage = lazy(() => import("./settings/McpPage").then((m) => ({ default: m.McpPage })));
export const MemoryPage = lazy(() => import("./settings/MemoryPage").then((m) => ({ default: m.MemoryPage })));
export const PasswordPage = lazy(() => import("./settings/PasswordPage").then((m) => ({ default: m.PasswordPage })));
export const SkillsPage = lazy(() => import("./settings/SkillsPage").then((m) => ({ default: m.SkillsPage })));
export const ToolsPage = lazy(() => import("./settings/ToolsPage").then((m) => ({ default: m.ToolsPage })));
export const UsersPage = lazy(() => import("./settings/UsersPage").then((m) => ({ default: m.UsersPage })));
