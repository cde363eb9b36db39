# syntax=docker/dockerfile:1
# ocrdraft: a static binary on distroless, run as a non-root user.
#   docker build --build-arg VERSION="$(git describe --tags --always --dirty)" \
#     --build-arg REVISION="$(git rev-parse HEAD)" -t ocrdraft .
#   docker run -p 8080:8080 -e OCR_MODEL=gpt-4o-mini -e OCR_MODEL_API_KEY=sk-... -e OCR_API_KEYS=... ocrdraft

FROM golang:1.26 AS build
WORKDIR /src
# Modules first, so that a source change does not download them again.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The build context has no .git (.dockerignore), so the toolchain cannot record the version and
# commit itself: the build arguments pass them (internal/version). Left out, the binary says
# devel and unknown (ocrdraft version, GET /version, ocrdraft_build_info).
ARG VERSION=""
ARG REVISION=""
RUN CGO_ENABLED=0 GOOS=linux go build -trimpath -buildvcs=false \
    -ldflags="-s -w -X github.com/ocrdraft/ocrdraft/internal/version.version=${VERSION} -X github.com/ocrdraft/ocrdraft/internal/version.revision=${REVISION}" \
    -o /out/ocrdraft ./cmd/ocrdraft
# The notices of what the binary embeds go with the image (docs/images.md, Licences): ocrdraft's
# LICENSE and NOTICE, the font's (Apache-2.0) and libheif's and libde265's (LGPL-3.0), kept beside
# the WebAssembly build in intake/internal/heif.
RUN mkdir -p /out/licenses && cp LICENSE NOTICE intake/sandbox/COPYRIGHT.wqy-microhei intake/sandbox/LICENSE.Apache-2.0 /out/licenses/ \
    && cp intake/internal/heif/LICENSE.* /out/licenses/

# distroless/static has CA certificates (for an https model endpoint) and tzdata, and no shell.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/ocrdraft /usr/local/bin/ocrdraft
COPY --from=build /out/licenses /usr/share/doc/ocrdraft
USER nonroot:nonroot
ENV OCR_LISTEN_ADDR=:8080
EXPOSE 8080
# No shell or curl here: the binary asks its own /healthz on OCR_LISTEN_ADDR (over loopback) and
# exits 0 or 1. The interval is Docker's; the command gives up after 2s.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["/usr/local/bin/ocrdraft", "healthcheck"]
# SIGTERM drains in-flight requests for up to OCR_SHUTDOWN_TIMEOUT (30s); give the container's
# stop timeout a little more than that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/ocrdraft", "serve"]
