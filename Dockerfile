# syntax=docker/dockerfile:1.7
# Engram service image: docker build -t engram .   (docker compose up --build builds it once for both instances)
FROM eclipse-temurin:21-jdk AS build
WORKDIR /src
# the build's dependency cache: the Maven repository is a BuildKit cache mount, so dependencies download once and
# stay across builds of changed sources
COPY .mvn .mvn
COPY mvnw pom.xml ./
COPY schemas schemas
COPY metrics metrics
COPY understanding understanding
COPY stores stores
COPY retrieval retrieval
COPY processors processors
COPY topology topology
COPY sinks sinks
COPY query query
COPY service service
COPY bench bench
RUN --mount=type=cache,target=/root/.m2 ./mvnw -B -q -DskipTests -Dspotless.check.skip=true package

FROM eclipse-temurin:21-jre
# curl for the health check; a system user without a shell or home owns the state
RUN apt-get update \
    && apt-get install -y --no-install-recommends curl \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --uid 10001 --no-create-home --shell /usr/sbin/nologin engram \
    && mkdir -p /var/lib/engram \
    && chown engram /var/lib/engram
WORKDIR /app
COPY --from=build /src/service/target/engram.jar /app/engram.jar
COPY --from=build /src/service/target/lib /app/lib
# the demo's documents, for the compose stack's one-shot seeding service
COPY service/src/main/resources/demo/documents.jsonl /app/demo/documents.jsonl
ENV ENGRAM_STATE_DIR=/var/lib/engram/state \
    ENGRAM_HTTP_PORT=8080 \
    JAVA_OPTS="-Xmx1g"
USER engram
VOLUME /var/lib/engram
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=6 \
    CMD curl -fsS http://localhost:8080/v1/health/ready > /dev/null || exit 1
# the command's words follow "engram" (sh's $0): run by default; the compose seeding service passes ingest …
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp '/app/engram.jar:/app/lib/*' dev.engram.service.app.EngramMain \"$@\"", "engram"]
CMD ["run"]
