"""The run engine: the run manager, its queue contract and the local queue, admission and limits,
the executor with the run's typed state, the graph stream, and what runs around a run."""
