# Offline stand-in for nginx:1.27-alpine (Debian's nginx), for the compose `nginx` profile and
# `lb`: the configuration is mounted at /etc/nginx/nginx.conf; wget serves the healthchecks.
ARG BASE
FROM ${BASE}
# hadolint ignore=DL3008
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx wget \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/*
EXPOSE 80 443
STOPSIGNAL SIGQUIT
CMD ["nginx", "-g", "daemon off;"]
