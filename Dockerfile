# syntax=docker/dockerfile:1
# ocrdraft: a static binary on distroless, run as a non-root user.
#   docker build -t ocrdraft .
#   docker run -p 8080:8080 -e OCR_MODEL=gpt-4o-mini -e OCR_MODEL_API_KEY=sk-... -e OCR_API_KEYS=... ocrdraft

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false -ldflags="-s -w" -o /out/ocrdraft ./cmd/ocrdraft

# distroless/static has CA certificates (for an https model endpoint) and tzdata, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ocrdraft /usr/local/bin/ocrdraft
USER nonroot:nonroot
ENV OCR_LISTEN_ADDR=:8080
EXPOSE 8080
# SIGTERM drains in-flight requests for up to OCR_SHUTDOWN_TIMEOUT (30s); give the container's
# stop timeout a little more than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/ocrdraft", "serve"]
