"""OpenAPI links: where the id a create answers can be used next (clients and the stateful
fuzz run follow them, e.g. create a thread, then read its state)."""

from __future__ import annotations

_THREAD_ID = {"thread_id": "$response.body#/thread_id"}

_THREAD_OPERATIONS = {
    "GetThread": "get_thread_api_langgraph_threads__thread_id__get",
    "PatchThread": "patch_thread_api_langgraph_threads__thread_id__patch",
    "CopyThread": "copy_api_langgraph_threads__thread_id__copy_post",
    "GetThreadState": "get_state_api_langgraph_threads__thread_id__state_get",
    "UpdateThreadState": "post_state_api_langgraph_threads__thread_id__state_post",
    "GetThreadHistory": "get_history_api_langgraph_threads__thread_id__history_get",
    "SearchThreadHistory": "post_history_api_langgraph_threads__thread_id__history_post",
    "ListThreadRuns": "list_runs_api_langgraph_threads__thread_id__runs_get",
    "ThreadTokenUsage": "token_usage_api_threads__thread_id__token_usage_get",
    "ListThreadUploads": "list_uploads_api_threads__thread_id__uploads_get",
    "ThreadMessagesPage": "messages_page_api_threads__thread_id__messages_page_get",
    "ThreadFeedback": "thread_feedback_api_threads__thread_id__feedback_get",
    "DeleteThread": "delete_thread_api_langgraph_threads__thread_id__delete",
}


def _links(operations: dict[str, str], parameters: dict[str, str]) -> dict[str, object]:
    return {
        name: {"operationId": operation, "parameters": dict(parameters)}
        for name, operation in operations.items()
    }


THREAD_LINKS: dict[str, object] = _links(_THREAD_OPERATIONS, _THREAD_ID)
"""From a thread (created or copied) to what can be done with it."""

ASSISTANT_LINKS: dict[str, object] = _links(
    {
        "GetAssistant": "get_assistant_api_langgraph_assistants__assistant_id__get",
        "PatchAssistant": "patch_assistant_api_langgraph_assistants__assistant_id__patch",
        "ListAssistantVersions": (
            "list_versions_api_langgraph_assistants__assistant_id__versions_post"
        ),
        "GetAssistantSchemas": "get_schemas_api_langgraph_assistants__assistant_id__schemas_get",
        "DeleteAssistant": "delete_assistant_api_langgraph_assistants__assistant_id__delete",
    },
    {"assistant_id": "$response.body#/assistant_id"},
)
"""From a created assistant to what can be done with it."""
