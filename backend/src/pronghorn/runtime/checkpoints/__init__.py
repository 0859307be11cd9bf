"""LangGraph's checkpointers and store on the app's database, with the history rewrites (delete for
runs, copy, prune) of the saver contract."""
