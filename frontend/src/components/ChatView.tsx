import type { Client, Message } from "@langchain/langgraph-sdk";
import { useCallback, useEffect, useMemo, useState } from "react";
import type { AgentsState } from "../hooks/useAgents";
import type { ModelsState } from "../hooks/useModels";
import { STREAM_MODES, useChatStream } from "../hooks/useChatStream";
import { useBranching, type ForkRun } from "../hooks/useBranching";
import { useBudget } from "../hooks/useBudget";
import { useEnabledSkills } from "../hooks/useEnabledSkills";
import { useSuggestions } from "../hooks/useSuggestions";
import { useFeedback } from "../hooks/useFeedback";
import { useTokenUsage } from "../hooks/useTokenUsage";
import { useUploads } from "../hooks/useUploads";
import { normalizeArtifacts } from "../lib/artifacts";
import { newId } from "../lib/ids";
import { approvalResume, extractApprovals } from "../lib/approval";
import { extractClarification } from "../lib/clarification";
import { describeError, isAbortError } from "../lib/errors";
import { groupMessages } from "../lib/messages";
import { UNTITLED } from "../lib/threads";
import { applyTaskEvent, type TaskMap } from "../lib/subagents";
import { normalizeTodos } from "../lib/todos";
import type { ApprovalRequest, RunContext } from "../lib/types";
import { AgentPicker } from "./AgentPicker";
import { ApprovalCard } from "./ApprovalCard";
import { ArtifactsPanel } from "./ArtifactsPanel";
import { ChatHeader } from "./ChatHeader";
import { ClarificationPrompt } from "./ClarificationPrompt";
import { Composer } from "./Composer";
import { EmptyState } from "./EmptyState";
import { ErrorNotice } from "./ErrorNotice";
import { MessageList } from "./MessageList";
import { ModelPicker } from "./ModelPicker";
import { RunOptions } from "./RunOptions";
import { SubagentTasksContext } from "./subagentTasks";
import { Suggestions } from "./Suggestions";
import { TodoList } from "./TodoList";
import "../styles/chat.css";

interface Props {
  client: Client;
  threadId: string | null;
  navigate: (threadId: string | null, opts?: { replace?: boolean }) => void;
  models: ModelsState;
  agents: AgentsState;
  onThreadsChanged: () => void;
  onOpenSidebar: () => void;
}

/** One conversation: messages, plan, clarification, composer, artifacts. */
export function ChatView({ client, threadId, navigate, models, agents, onThreadsChanged, onOpenSidebar }: Props) {
  const [usageVersion, setUsageVersion] = useState(0);
  const [draft, setDraft] = useState("");
  const [planMode, setPlanMode] = useState(false);
  const [ultra, setUltra] = useState(false);
  const [tasks, setTasks] = useState<{ threadId: string | null; tasks: TaskMap }>({ threadId, tasks: {} });
  const [thinking, setThinking] = useState(true);
  const [artifactsOpen, setArtifactsOpen] = useState(false);
  const [dismissedError, setDismissedError] = useState<unknown>(null);
  // Runs finished in this view (suggestions follow a fresh answer, not an old thread's).
  const [finished, setFinished] = useState<{ threadId: string | null; count: number }>({ threadId: null, count: 0 });

  const agent = agents.selected;
  const stream = useChatStream({
    client,
    threadId,
    assistantId: agent?.assistant_id,
    onThreadId: useCallback(
      (id: string) => {
        navigate(id);
        onThreadsChanged();
      },
      [navigate, onThreadsChanged],
    ),
    onRunFinished: useCallback((finishedIn?: string) => {
      setUsageVersion((v) => v + 1);
      if (finishedIn) setFinished((f) => ({ threadId: finishedIn, count: f.count + 1 }));
      onThreadsChanged();
    }, [onThreadsChanged]),
    onCustomEvent: useCallback(
      (data: unknown) => setTasks((prev) => ({ ...prev, tasks: applyTaskEvent(prev.tasks, data) })),
      [],
    ),
  });
  // Live tasks belong to the thread they streamed in (a new thread id adopts the draft's).
  if (tasks.threadId !== threadId) setTasks({ threadId, tasks: tasks.threadId === null ? tasks.tasks : {} });
  const uploads = useUploads(threadId);
  const usage = useTokenUsage(threadId, usageVersion);
  const budget = useBudget(usageVersion);
  const feedback = useFeedback(threadId, usageVersion);

  // A custom agent with its own model answers with it (the run's context would override it).
  const agentModel = agent?.model ?? null;
  const modelName = agentModel ?? models.selected;
  const model = models.models.find((m) => m.name === modelName);
  const runContext: RunContext = {
    model_name: agentModel ? undefined : (models.selected ?? undefined),
    thinking_enabled: Boolean(model?.supports_thinking) && thinking,
    is_plan_mode: planMode,
    subagent_enabled: ultra,
    ...(model?.supports_thinking && thinking ? { reasoning_effort: "medium" as const } : {}),
  };

  const fork: ForkRun = (input, checkpoint, shown) => {
    setDismissedError(null);
    void stream.submit(input, {
      checkpoint,
      context: runContext,
      streamMode: [...STREAM_MODES],
      streamResumable: true,
      optimisticValues: (prev) => ({ ...prev, messages: shown }),
    });
  };
  const branching = useBranching(stream, threadId, fork);
  // After switching away from a run that was streaming, the chosen branch is shown.
  const values = branching.detachedValues ?? stream.values;
  const messages = branching.detachedValues?.messages ?? stream.messages;
  const { isLoading, stop } = stream;
  const clarification = isLoading ? null : extractClarification(stream.interrupts);
  const approvals = isLoading ? [] : extractApprovals(stream.interrupts);
  const waiting = clarification != null || approvals.length > 0;
  const items = useMemo(() => groupMessages(messages, isLoading, waiting), [messages, isLoading, waiting]);
  const lastItem = items[items.length - 1];
  const freshAnswer =
    !isLoading && !waiting && finished.threadId === threadId && lastItem?.kind === "assistant"
      ? `${finished.count}:${lastItem.id}`
      : null;
  const suggestions = useSuggestions(threadId, freshAnswer, messages);
  const skills = useEnabledSkills();
  const todos = normalizeTodos(values?.todos);
  const artifacts = normalizeArtifacts(values?.artifacts);
  const title = (typeof values?.title === "string" && values.title) || UNTITLED;

  // Esc stops the running run.
  useEffect(() => {
    if (!isLoading) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === "Escape" && !e.defaultPrevented) void stop();
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [isLoading, stop]);

  // Open the panel when a new artifact shows up.
  const [seenArtifacts, setSeenArtifacts] = useState(artifacts.length);
  if (artifacts.length !== seenArtifacts) {
    setSeenArtifacts(artifacts.length);
    if (artifacts.length > seenArtifacts && isLoading) setArtifactsOpen(true);
  }


  const send = (text: string) => {
    const files = uploads.take();
    const message: Message = {
      id: newId(),
      type: "human",
      content: text,
      additional_kwargs: files.length
        ? { files: files.map(({ name, size, virtual_path, url }) => ({ name, size, virtual_path, url })) }
        : {},
    };
    setDraft("");
    setDismissedError(null);
    branching.attach();
    void stream.submit(
      { messages: [message] },
      {
        context: runContext,
        streamMode: [...STREAM_MODES],
        streamResumable: true,
        optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), message] }),
      },
    );
  };

  const answer = (text: string) => {
    setDismissedError(null);
    branching.attach();
    void stream.submit(null, {
      command: { resume: text },
      context: runContext,
      streamMode: [...STREAM_MODES],
      streamResumable: true,
    });
  };

  const decide = (request: ApprovalRequest, approved: boolean, reason?: string) => {
    setDismissedError(null);
    branching.attach();
    void stream.submit(null, {
      command: { resume: approvalResume(request, approved, reason) },
      context: runContext,
      streamMode: [...STREAM_MODES],
      streamResumable: true,
    });
  };

  const ensureThread = async () => {
    if (threadId) return threadId;
    const thread = await client.threads.create();
    navigate(thread.thread_id);
    onThreadsChanged();
    return thread.thread_id;
  };

  const error = stream.error;
  const showError = error != null && error !== dismissedError && !isAbortError(error);

  return (
    <div className="chat-layout">
      <main className="chat-main">
        <ChatHeader
          title={threadId ? title : UNTITLED}
          usage={usage}
          budget={budget}
          artifactCount={artifacts.length}
          artifactsOpen={artifactsOpen}
          onToggleArtifacts={() => setArtifactsOpen((o) => !o)}
          onOpenSidebar={onOpenSidebar}
        />
        {items.length === 0 && !isLoading && !stream.isThreadLoading ? (
          <EmptyState onPick={setDraft} />
        ) : (
          <SubagentTasksContext.Provider value={tasks.tasks}>
            <MessageList
              items={items}
              isLoading={isLoading}
              feedback={threadId ? feedback : undefined}
              branching={threadId ? branching : undefined}
              footer={<Suggestions items={suggestions} onPick={send} />}
            />
          </SubagentTasksContext.Provider>
        )}
        <div className="chat-bottom">
          <div className="chat-bottom-column">
            <TodoList todos={todos} />
            {showError && (
              <ErrorNotice title="Run failed" message={describeError(error)} onDismiss={() => setDismissedError(error)} />
            )}
            {approvals.slice(0, 1).map((request) => (
              <ApprovalCard key={request.callId} request={request} onDecide={(ok, why) => decide(request, ok, why)} disabled={isLoading} />
            ))}
            {clarification && <ClarificationPrompt request={clarification} onAnswer={answer} disabled={isLoading} />}
            <Composer
              draft={draft}
              onDraftChange={setDraft}
              onSend={send}
              onStop={() => void stop()}
              onFiles={(files) => void uploads.add(files, ensureThread)}
              onRemoveFile={(name) => void uploads.remove(name)}
              pendingFiles={uploads.pending}
              uploadErrors={uploads.errors}
              onDismissUploadErrors={uploads.dismissErrors}
              limits={uploads.limits}
              isRunning={isLoading}
              uploading={uploads.busy}
              skills={skills}
            >
              <AgentPicker agents={agents} disabled={isLoading} />
              <ModelPicker
                models={models.models}
                selected={modelName}
                onSelect={models.select}
                disabled={isLoading || agentModel !== null}
              />
              <RunOptions
                planMode={planMode}
                onPlanMode={setPlanMode}
                ultra={ultra}
                onUltra={setUltra}
                thinking={thinking}
                onThinking={setThinking}
                supportsThinking={Boolean(model?.supports_thinking)}
                disabled={isLoading}
              />
            </Composer>
          </div>
        </div>
      </main>
      {artifactsOpen && threadId && (
        <ArtifactsPanel threadId={threadId} artifacts={artifacts} onClose={() => setArtifactsOpen(false)} />
      )}
    </div>
  );
}
