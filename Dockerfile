# Builds the reprieve image used by deploy/: docker build -t reprieve:dev .
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /reprieve ./cmd/reprieve

FROM gcr.io/distroless/static:nonroot
COPY --from=build /reprieve /reprieve
ENTRYPOINT ["/reprieve"]
