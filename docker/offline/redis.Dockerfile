# Offline stand-in for redis:7-alpine (Debian's redis-server 7), for the compose `scale`
# profile: the service's `command:` starts `redis-server` with its options.
ARG BASE
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/*
USER redis
WORKDIR /var/lib/redis
EXPOSE 6379
CMD ["redis-server"]
