# The three binaries in one image: lightbox-api, lightbox-worker and
# lightbox-controller. Every C dependency builds from bundled sources, so
# the build stage needs only the Rust toolchain and a C compiler.
FROM rust:1.95-bookworm AS build
WORKDIR /src
COPY . .
RUN cargo build --release --locked \
        -p lightbox-api -p lightbox-worker -p lightbox-controller \
    && mkdir -p /out \
    && cp target/release/lightbox-api target/release/lightbox-worker \
          target/release/lightbox-controller /out/

# Distroless with glibc and CA certificates; runs as uid 65532 (nonroot).
FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /out/ /usr/local/bin/
USER 65532:65532
EXPOSE 8080 9090
ENTRYPOINT []
CMD ["/usr/local/bin/lightbox-api"]
