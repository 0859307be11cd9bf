# Pronghorn sandbox image (sandbox.kind: container): what the agent's commands run in.
# Python 3 and the usual command-line tools, no services, no ENV of its own (the gateway
# gives every command a fixed environment). The gateway starts each container as a non-root
# uid with a read-only root, every capability dropped and no network by default, so nothing
# here needs to be privileged. Build from the repository root:
#   docker build -f docker/sandbox.Dockerfile -t pronghorn-sandbox:latest .
# BASE_IMAGE may be a Debian bookworm root filesystem imported offline (docs/sandbox.md).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}

# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        bash ca-certificates coreutils curl diffutils file findutils gawk git grep gzip jq \
        less patch procps python3 python3-pip python3-venv sed tar tree unzip util-linux \
        wget xz-utils zip \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /mnt/user-data/workspace /mnt/user-data/uploads /mnt/user-data/outputs \
        /mnt/threads /mnt/skills

WORKDIR /mnt/user-data/workspace
CMD ["sleep", "infinity"]
