# syntax=docker/dockerfile:1
# Build stage: a static binary (no cgo: SQLite is modernc.org/sqlite, pure Go).
# .ci/run runs this stage's build command directly, since CI has no Docker engine.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN mkdir -p /out/data && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/deskbot ./cmd/deskbot

# Final stage: the binary alone on a minimal base, as an unprivileged user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/deskbot /usr/local/bin/deskbot
# The volume must belong to the unprivileged user (65532 in distroless).
COPY --from=build --chown=65532:65532 /out/data /data
# Rules (rules.yaml is picked up from the working directory) and the SQLite
# state live in the /data volume.
WORKDIR /data
VOLUME ["/data"]
ENV DESKBOT_STATE=/data/deskbot.db \
    DESKBOT_HTTP_ADDR=0.0.0.0:9717 \
    DESKBOT_LOG_FORMAT=json
EXPOSE 9717
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/deskbot"]
CMD ["run"]
