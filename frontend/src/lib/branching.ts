/** What the message list needs to edit, regenerate and switch branches (built by ChatView). */
export interface BranchInfo {
  branch: string | undefined;
  options: string[] | undefined;
  /** The message can be forked from (its checkpoint is in the loaded history). */
  canFork: boolean;
}

export interface Branching {
  info: (messageId: string) => BranchInfo;
  select: (branch: string) => void;
  /** Rerun from a human message with new text (a new branch; the old one is kept). */
  edit: (messageId: string, text: string) => void;
  /** A new answer to the same question (a new branch of the answer starting at `messageId`). */
  regenerate: (messageId: string) => void;
}
