# Offline stand-in for postgres:16-alpine (Debian's PostgreSQL 15), for the compose `scale`
# profile: the same POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB variables, data in
# /var/lib/postgresql/data, pg_isready for the healthcheck, run as the postgres user.
ARG BASE
FROM ${BASE}
# No cluster from the package: the entrypoint creates one in PGDATA on first start.
# hadolint ignore=DL3008
RUN mkdir -p /etc/postgresql-common/createcluster.d \
    && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/no-main-cluster.conf \
    && apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql \
    && chmod 0700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
USER postgres
VOLUME ["/var/lib/postgresql/data"]
EXPOSE 5432
# SIGINT: PostgreSQL's fast shutdown (SIGTERM waits for every client to leave).
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint"]
CMD []
