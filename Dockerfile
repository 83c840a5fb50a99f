# Builds the reprieve image used by deploy/:
#   docker build --build-arg VERSION=$(git describe --tags --always) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t reprieve:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=""
ARG COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/reprieve/reprieve/internal/cli/version.version=${VERSION} -X github.com/reprieve/reprieve/internal/cli/version.commit=${COMMIT}" \
      -o /reprieve ./cmd/reprieve

FROM gcr.io/distroless/static:nonroot
COPY --from=build /reprieve /reprieve
USER nonroot:nonroot
ENTRYPOINT ["/reprieve"]
