"""The event log behind every stream: the broker contract, the in-process and Redis brokers, the
SQL event store and the batching writer."""
