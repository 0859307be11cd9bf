"""Scale-out: the cluster run queue, its claim loop, leases, the control bus between replicas, the
replica cards and the channels' database lease."""
