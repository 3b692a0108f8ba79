// Package ociimage builds kubectl-informer's container image without a
// container daemon, with go-containerregistry: one image per platform (a
// static binary on an empty base with CA certificates, time zone data and
// a non-root user), an OCI image index over them written as an OCI image
// layout, and the push of that index to a registry. It also packs a Helm
// chart directory into a chart archive and an OCI artifact with Helm's
// media types, so that a release publishes the chart without the helm
// binary.
//
// Everything it writes is reproducible: the same inputs (binary, files,
// metadata and time) give the same bytes and so the same digests. Layer
// entries are sorted by name, owned by root unless said otherwise, dated
// with the one time given (the commit's, or SOURCE_DATE_EPOCH), and
// compressed by compress/gzip at a fixed level with an empty gzip header.
package ociimage
