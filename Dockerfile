# syntax=docker/dockerfile:1
# Build: a static, cgo-free binary (modernc.org/sqlite needs no libc).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X service/cmd.Version=${VERSION}" -o /out/service . \
 && mkdir -p /out/data

# Run: distroless static, as its built-in non-root user (uid 65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/service /usr/local/bin/service
# The database lives on a volume; the directory belongs to the runtime user.
COPY --from=build --chown=65532:65532 /out/data /data
VOLUME ["/data"]
ENV SERVICE_DB=/data/service.db \
    SERVICE_ADDR=:8080
EXPOSE 8080
USER 65532:65532
# distroless has no shell or curl: the binary probes its own /healthz.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["/usr/local/bin/service", "healthcheck", "--addr", "127.0.0.1:8080"]
ENTRYPOINT ["/usr/local/bin/service"]
CMD ["serve"]
