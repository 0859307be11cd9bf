"""The sandbox agent: a small HTTP server that runs inside a sandbox pod and executes the
thread's commands and file operations there (``python -m pronghorn.sandbox.agent``).

The gateway reaches it at the pod's IP and port with a per-pod bearer token; see
docs/sandbox.md, "Kubernetes"."""
