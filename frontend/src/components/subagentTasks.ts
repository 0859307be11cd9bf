import { createContext, useContext } from "react";
import type { TaskMap } from "../lib/subagents";

/** The live sub-agent tasks of the open thread (folded from the run's `custom` events). */
export const SubagentTasksContext = createContext<TaskMap>({});

export function useSubagentTasks(): TaskMap {
  return useContext(SubagentTasksContext);
}
