# Offline stand-in for python:3.11-slim-bookworm, built from Debian packages only (see
# scripts/offline-images and docs/deployment.md, "Offline images"). The Pronghorn Dockerfile
# expects /usr/local/bin/python3.11 and a pip that may install into the system interpreter.
ARG BASE
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        python3 python3-pip ca-certificates \
    && rm -rf /var/lib/apt/lists/* /usr/lib/python3.11/EXTERNALLY-MANAGED \
    && ln -s /usr/bin/python3.11 /usr/local/bin/python3.11 \
    && ln -s /usr/bin/python3.11 /usr/local/bin/python3 \
    && ln -s /usr/bin/python3.11 /usr/local/bin/python
CMD ["python3"]
