"""`auth.mode: custom`: a `langgraph_sdk.Auth` object run unchanged, its authenticate and authorize
handlers as the LangGraph server runs them."""
