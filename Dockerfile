# Engram service image: docker build -t engram .
FROM eclipse-temurin:21-jdk AS build
WORKDIR /src
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
RUN ./mvnw -B -q -DskipTests -Dspotless.check.skip=true package

FROM eclipse-temurin:21-jre
WORKDIR /app
COPY --from=build /src/service/target/engram.jar /app/engram.jar
COPY --from=build /src/service/target/lib /app/lib
ENV ENGRAM_STATE_DIR=/var/lib/engram/state \
    ENGRAM_HTTP_PORT=8080 \
    JAVA_OPTS="-Xmx1g"
VOLUME /var/lib/engram
EXPOSE 8080
ENTRYPOINT ["sh", "-c", "exec java $JAVA_OPTS --enable-native-access=ALL-UNNAMED --add-modules jdk.incubator.vector -cp '/app/engram.jar:/app/lib/*' dev.engram.service.EngramMain run"]
