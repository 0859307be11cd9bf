"""The lead agent's middlewares, one per file (see docs/agent.md for the chain)."""

from pronghorn.agent.middlewares.clarification import ClarificationMiddleware
from pronghorn.agent.middlewares.dangling_tool_calls import DanglingToolCallMiddleware
from pronghorn.agent.middlewares.llm_errors import ChainLink, CircuitBreakers, LLMErrorMiddleware
from pronghorn.agent.middlewares.loop_detection import LoopDetectionMiddleware
from pronghorn.agent.middlewares.safety import SafetyFinishReasonMiddleware
from pronghorn.agent.middlewares.sandbox import SandboxMiddleware
from pronghorn.agent.middlewares.summarization import SummarizationMiddleware
from pronghorn.agent.middlewares.thread_data import ThreadDataMiddleware
from pronghorn.agent.middlewares.title import TitleMiddleware
from pronghorn.agent.middlewares.todos import TodoReminderMiddleware
from pronghorn.agent.middlewares.tool_errors import ToolErrorMiddleware
from pronghorn.agent.middlewares.tool_output_budget import ToolOutputBudgetMiddleware
from pronghorn.agent.middlewares.uploads import UploadsMiddleware
from pronghorn.agent.middlewares.viewed_images import ViewedImagesMiddleware

__all__ = [
    "ChainLink",
    "CircuitBreakers",
    "ClarificationMiddleware",
    "DanglingToolCallMiddleware",
    "LLMErrorMiddleware",
    "LoopDetectionMiddleware",
    "SafetyFinishReasonMiddleware",
    "SandboxMiddleware",
    "SummarizationMiddleware",
    "ThreadDataMiddleware",
    "TitleMiddleware",
    "TodoReminderMiddleware",
    "ToolErrorMiddleware",
    "ToolOutputBudgetMiddleware",
    "UploadsMiddleware",
    "ViewedImagesMiddleware",
]
