# syntax=docker/dockerfile:1
# Multi-stage build of the static petstore binary.
#   docker build -t petstore .
#   docker run -p 8080:8080 -v petstore-data:/data petstore
# The SQLite default lives in the /data volume; set DATABASE_URL=mysql://...
# to use MySQL instead.

FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/petstore . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/petstore /usr/local/bin/petstore
COPY --from=build --chown=65532:65532 /out/data /data
WORKDIR /data
USER 65532:65532
ENV LISTEN_ADDR=:8080 \
    DATABASE_URL=sqlite:/data/petstore.db
VOLUME ["/data"]
EXPOSE 8080
# No shell in the image: the binary probes itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/usr/local/bin/petstore", "healthcheck"]
ENTRYPOINT ["/usr/local/bin/petstore"]
CMD ["serve"]
