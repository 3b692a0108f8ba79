# kubectl-informer — build, local control plane, demo and tests.
# `make demo` and `make test` are all a fresh machine with Go needs.

SHELL        := /usr/bin/env bash
.SHELLFLAGS  := -eu -o pipefail -c
.DEFAULT_GOAL := build

MODULE   := github.com/kubectl-informer/kubectl-informer
VERSION  ?= $(shell git describe --tags --match 'v*' --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -s -w -X $(MODULE)/pkg/version.Version=$(VERSION) -X $(MODULE)/pkg/version.Commit=$(COMMIT)

OUT      := _output
BIN_DIR  := $(OUT)/bin
CLUSTER  := $(OUT)/cluster
KUBECONFIG_LOCAL := $(CURDIR)/$(CLUSTER)/kubeconfig
CONTROLPLANE := $(BIN_DIR)/kube-apiserver $(BIN_DIR)/etcd $(BIN_DIR)/kubectl

# Demo workload size.
DEMO_PODS ?= 300

GO_TEST  ?= go test
UNIT_PKGS = $$(go list ./... | grep -v /test/e2e)
E2E_PKGS  = ./test/e2e/...

# Release platforms of make dist: os/arch, comma-separated; empty means all
# six (linux, darwin and windows on amd64 and arm64).
PLATFORMS ?=

.PHONY: build
build: ## Build bin/kubectl-informer and its completion helper bin/kubectl_complete-informer
	CGO_ENABLED=0 go build -trimpath -ldflags '$(LDFLAGS)' -o bin/kubectl-informer ./cmd/kubectl-informer
	install -m 0755 hack/dist/kubectl_complete-informer bin/kubectl_complete-informer

# Each platform's binary is built like `make build` (no cgo, -trimpath,
# LDFLAGS) by hack/dist, which packs, checksums and renders the manifest.
.PHONY: dist
dist: ## Release archives, checksums.txt and the krew manifest plugin.yaml in dist/ (VERSION=vX.Y.Z, PLATFORMS=os/arch,...)
	go run ./hack/dist --version '$(VERSION)' --platforms '$(PLATFORMS)' --ldflags '$(LDFLAGS)' --out dist

# The container image: hack/image builds it with go-containerregistry (no
# container daemon, no registry) as an OCI image layout, an image index over
# IMAGE_PLATFORMS (os/arch, comma-separated; empty means kube-state-metrics'
# five: linux/amd64, arm64, arm (v7: GOARM=7), ppc64le and s390x). Each
# platform's binary is built as make build builds it. The same commit gives
# the same digest: every date is the commit's (SOURCE_DATE_EPOCH).
IMAGE_PLATFORMS ?=
IMAGE_DIR       ?= $(OUT)/image
REVISION        ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
# Where image-push and chart-push push: REGISTRY/kubectl-informer:VERSION,
# and the chart as CHART_REGISTRY/NAME:CHART_VERSION (empty: Chart.yaml's).
REGISTRY        ?=
CHART_REGISTRY  ?= $(REGISTRY)/charts
CHART_DIR       ?= charts/kubectl-informer
CHART_VERSION   ?=
CHART_APP_VERSION ?=
# The image's CA certificates and time zone data are Debian's packages on
# the build machine; image-deps installs them with apt-get when missing.
IMAGE_DEBS      := ca-certificates tzdata
SUDO            := $(if $(filter 0,$(shell id -u)),,sudo)

# $(call apt-install,PACKAGES,WHAT): install those of Debian's PACKAGES that
# are missing with apt-get, saying they are WHAT.
define apt-install
	@missing=; for p in $(1); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		command -v apt-get >/dev/null || { echo "make $@ needs Debian's package(s)$$missing ($(2)), and this machine has no apt-get"; exit 1; }; \
		echo "installing Debian's package(s)$$missing with apt-get: $(2)"; \
		$(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing; \
	fi
endef

.PHONY: image-deps
image-deps: ## Install Debian's ca-certificates and tzdata with apt-get when missing (the image's CA certificates and time zone data)
	$(call apt-install,$(IMAGE_DEBS),the image's CA certificates and time zone data)

.PHONY: image
image: image-deps ## OCI image layout of every platform in _output/image, tagged VERSION (IMAGE_PLATFORMS=os/arch,...)
	go run ./hack/image build --out '$(IMAGE_DIR)' --platforms '$(IMAGE_PLATFORMS)' --version '$(VERSION)' \
		--commit '$(COMMIT)' --revision '$(REVISION)' --source-date-epoch '$(SOURCE_DATE_EPOCH)' --ldflags '$(LDFLAGS)'

.PHONY: registry-set
registry-set:
	@test -n '$(REGISTRY)' || { echo "REGISTRY is required, e.g. make image-push REGISTRY=ghcr.io/kubectl-informer"; exit 1; }

.PHONY: image-push
image-push: registry-set image ## Push the image index as REGISTRY/kubectl-informer:VERSION (credentials: docker config and its helpers)
	go run ./hack/image push --layout '$(IMAGE_DIR)' --version '$(VERSION)' --registry '$(REGISTRY)'

.PHONY: chart-push
chart-push: ## Pack CHART_DIR reproducibly and push it as a Helm OCI artifact to CHART_REGISTRY (default REGISTRY/charts)
	@test -n '$(REGISTRY)$(filter-out /charts,$(CHART_REGISTRY))' || { echo "REGISTRY is required, e.g. make chart-push REGISTRY=ghcr.io/kubectl-informer"; exit 1; }
	go run ./hack/image chart-push --chart '$(CHART_DIR)' --registry '$(CHART_REGISTRY)' --out '$(OUT)/charts' \
		--chart-version '$(CHART_VERSION)' --app-version '$(CHART_APP_VERSION)' --source-date-epoch '$(SOURCE_DATE_EPOCH)'

# The control plane is built from the Kubernetes Go modules in its own module
# (hack/controlplane) and only when a binary is missing or that module changed.
.PHONY: controlplane
controlplane: $(CONTROLPLANE) $(BIN_DIR)/localcluster ## Build kube-apiserver, etcd and kubectl into _output/bin

# The binaries report the version of k8s.io/kubernetes they are built from
# (kube-apiserver's /version, kubectl version), as release builds do.
K8S_VERSION = $(shell awk '$$1 == "k8s.io/kubernetes" && $$2 ~ /^v/ { print $$2; exit }' hack/controlplane/go.mod)
K8S_LDFLAGS = -X k8s.io/component-base/version.gitVersion=$(K8S_VERSION) \
	-X k8s.io/component-base/version.gitMajor=$(word 1,$(subst ., ,$(K8S_VERSION:v%=%))) \
	-X k8s.io/component-base/version.gitMinor=$(word 2,$(subst ., ,$(K8S_VERSION))) \
	-X k8s.io/component-base/version.gitTreeState=clean

$(CONTROLPLANE) &: hack/controlplane/go.mod hack/controlplane/go.sum
	@mkdir -p $(BIN_DIR)
	@echo "building kube-apiserver, etcd and kubectl $(K8S_VERSION) from the Kubernetes Go modules (a few minutes the first time)"
	cd hack/controlplane && go build -ldflags '$(K8S_LDFLAGS)' -o ../../$(BIN_DIR)/ ./kube-apiserver ./etcd ./kubectl
	@touch $(CONTROLPLANE)

$(BIN_DIR)/localcluster: $(wildcard hack/controlplane/localcluster/*.go) hack/controlplane/go.mod
	@mkdir -p $(BIN_DIR)
	cd hack/controlplane && go build -o ../../$(BIN_DIR)/localcluster ./localcluster

# Prometheus and promtool, for the tests that run a real Prometheus against
# the exporter and unit-test the shipped rules, are built from the Prometheus
# Go module in their own module (hack/prometheus), only when missing or when
# that module or PROM_TAGS changed, without the service discoveries the tests
# do not use: remove_all_sd keeps static and file configs, and
# enable_kubernetes_sd adds Kubernetes', with which the tests on a node
# scrape a Service's endpoints as kube-prometheus does. Module v0.3XY.Z is
# Prometheus 3.XY.Z.
PROMETHEUS := $(BIN_DIR)/prometheus $(BIN_DIR)/promtool
PROM_TAGS  := remove_all_sd,enable_kubernetes_sd
PROM_VERSION = $(shell awk '$$1 == "github.com/prometheus/prometheus" && $$2 ~ /^v0\./ { split(substr($$2, 4), v, "."); printf "%d.%d.%s", v[1] / 100, v[1] % 100, v[2]; exit }' hack/prometheus/go.mod)

.PHONY: prometheus
prometheus: $(PROMETHEUS) ## Build prometheus and promtool into _output/bin

# Holds PROM_TAGS, rewritten only when they change.
$(OUT)/prometheus.tags: FORCE
	@mkdir -p $(OUT)
	@echo '$(PROM_TAGS)' | cmp -s - $@ || echo '$(PROM_TAGS)' > $@

.PHONY: FORCE
FORCE:

$(PROMETHEUS) &: hack/prometheus/go.mod hack/prometheus/go.sum $(OUT)/prometheus.tags
	@mkdir -p $(BIN_DIR)
	@echo "building prometheus and promtool $(PROM_VERSION) from the Prometheus Go module (a few minutes the first time)"
	cd hack/prometheus && go build -trimpath -tags $(PROM_TAGS) \
		-ldflags '-s -w -X github.com/prometheus/common/version.Version=$(PROM_VERSION)' \
		-o ../../$(BIN_DIR)/ github.com/prometheus/prometheus/cmd/prometheus github.com/prometheus/prometheus/cmd/promtool
	@touch $(PROMETHEUS)

$(BIN_DIR)/workload: $(wildcard hack/workload/*.go test/workload/*.go) go.mod
	go build -o $@ ./hack/workload

# The node (make cluster-up NODE=1, and the e2e tests on a node): kubelet,
# kube-proxy, kube-scheduler and kube-controller-manager built from the same
# Kubernetes modules as kube-apiserver; containerd, runc, the CNI plugins,
# iptables, iproute2 and conntrack from Debian's packages, installed with
# apt-get when missing; the pause and test images (hack/nodeimages) and the
# project's image (make image, this machine's platform), written as archives
# that localcluster imports into containerd. Nothing is pulled from a
# registry. The node runs as root.
NODE          ?=
NODE_ON       := $(filter 1 true yes,$(NODE))
NODE_BINARIES := $(addprefix $(BIN_DIR)/,kubelet kube-proxy kube-scheduler kube-controller-manager)
NODE_DEBS     := containerd runc containernetworking-plugins iptables iproute2 conntrack
NODE_IMAGES   := $(OUT)/node-images
HOST_PLATFORM  = linux/$(shell go env GOARCH)

.PHONY: node
node: controlplane node-deps $(NODE_BINARIES) node-images ## Build and install what a node needs: its Kubernetes binaries, Debian's containerd, runc, CNI plugins and iptables, and its images

$(NODE_BINARIES) &: hack/controlplane/go.mod hack/controlplane/go.sum
	@mkdir -p $(BIN_DIR)
	@echo "building kubelet, kube-proxy, kube-scheduler and kube-controller-manager $(K8S_VERSION) from the Kubernetes Go modules (a few minutes the first time)"
	cd hack/controlplane && CGO_ENABLED=0 go build -ldflags '$(K8S_LDFLAGS)' -o ../../$(BIN_DIR)/ ./kubelet ./kube-proxy ./kube-scheduler ./kube-controller-manager
	@touch $(NODE_BINARIES)

.PHONY: node-deps
node-deps: ## Install Debian's containerd, runc, containernetworking-plugins, iptables, iproute2 and conntrack with apt-get when missing (the node's runtime and network)
	$(call apt-install,$(NODE_DEBS),the node's container runtime and network)

.PHONY: node-images
node-images: IMAGE_PLATFORMS = $(HOST_PLATFORM)
node-images: image ## The node's image archives in _output/node-images: pause, the test workload, and the project's image as ghcr.io/kubectl-informer/kubectl-informer:dev
	go run ./hack/nodeimages -out $(NODE_IMAGES) -layout $(IMAGE_DIR)

.PHONY: cluster-up
cluster-up: controlplane $(if $(NODE_ON),node) ## Start etcd + kube-apiserver on loopback (NODE=1: and a node that runs pods, as root); prints the kubeconfig path
	@$(if $(NODE_ON),$(SUDO) )$(BIN_DIR)/localcluster up -bin $(BIN_DIR) -dir $(CLUSTER)$(if $(NODE_ON), -node -images $(NODE_IMAGES))

.PHONY: cluster-down
cluster-down: ## Stop the local cluster started by cluster-up; with a node, also every container, and remove its mounts, cgroups, iptables rules and bridge
	@if [ -x $(BIN_DIR)/localcluster ]; then \
		if [ -d $(CLUSTER)/node ]; then $(SUDO) $(BIN_DIR)/localcluster down -bin $(BIN_DIR) -dir $(CLUSTER); \
		else $(BIN_DIR)/localcluster down -bin $(BIN_DIR) -dir $(CLUSTER); fi; \
	fi

.PHONY: cluster-status
cluster-status: ## Show whether the local control plane runs
	@$(BIN_DIR)/localcluster status -dir $(CLUSTER)

# With NODE=1 the cluster has the local node and the demo applies
# test/e2e/node/testdata/workloads.yaml into the namespace demo instead of
# the generated sample workload, whose pods are bound to nodes without a
# kubelet; the local PersistentVolume's directory and the exporter's log are
# in the cluster's state directory, which cluster-down removes.
.PHONY: reference
reference: ## Generate docs/reference, a page per command from its help (TestReferenceIsCurrent fails until it is done)
	go run ./hack/reference -dir docs/reference

.PHONY: docs-outputs
docs-outputs: controlplane ## Run the commands the docs show against the demo's workload and write their outputs into the docs' text blocks (DOCS=docs/cookbook.md: that page only)
	UPDATE_DOCS=1 DOCS=$(DOCS) KUBEBUILDER_ASSETS=$(CURDIR)/$(BIN_DIR) go test -count=1 -run 'TestDocs$$' ./test/e2e/examples/

.PHONY: demo
demo: build cluster-up $(if $(NODE_ON),,$(BIN_DIR)/workload) ## Start the local cluster, load a sample workload, run the plugin (NODE=1: on a node, with pods that really crash and restart, as root)
ifeq ($(NODE_ON),)
	@$(BIN_DIR)/workload --kubeconfig $(KUBECONFIG_LOCAL) --pods $(DEMO_PODS)
	@KUBECONFIG=$(KUBECONFIG_LOCAL) PATH="$(CURDIR)/bin:$(CURDIR)/$(BIN_DIR):$$PATH" hack/demo.sh
else
	@$(SUDO) env KUBECONFIG=$(KUBECONFIG_LOCAL) PATH="$(CURDIR)/bin:$(CURDIR)/$(BIN_DIR):$$PATH" DEMO_PV_DIR=$(CURDIR)/$(CLUSTER)/demo-pv DEMO_LOG_DIR=$(CURDIR)/$(CLUSTER) hack/demo.sh node
endif
	@echo
	@echo "The demo cluster keeps running. Point your own commands at it with:"
	@echo "  export KUBECONFIG=$(KUBECONFIG_LOCAL) PATH=$(CURDIR)/bin:$(CURDIR)/$(BIN_DIR):\$$PATH"
	@$(if $(NODE_ON),echo "  (its state directory is root's: run them as root)")
	@echo "Stop it with: make cluster-down"

.PHONY: test
test: test-unit test-e2e ## Unit and end-to-end tests, with -race

# make test-under-load: RUNS runs, each under HOGS busy loops (empty: one per core).
RUNS ?= 1
HOGS ?=

.PHONY: test-under-load
test-under-load: ## make test while busy loops keep every core busy (RUNS=1, HOGS=one per core)
	RUNS='$(RUNS)' HOGS='$(HOGS)' hack/test-under-load.sh

.PHONY: test-unit
test-unit: ## Unit tests (no cluster needed)
	$(GO_TEST) -race -count=1 $(UNIT_PKGS)

# The image's tests take the layout of the host's platform only, from
# IMAGE_LAYOUT.
.PHONY: test-e2e
test-e2e: IMAGE_PLATFORMS = $(HOST_PLATFORM)
test-e2e: controlplane prometheus image node ## End-to-end tests against a real kube-apiserver + etcd, and on a real node (test/e2e/node, as root)
	IMAGE_LAYOUT=$(CURDIR)/$(IMAGE_DIR) NODE_IMAGES=$(CURDIR)/$(NODE_IMAGES) KUBEBUILDER_ASSETS=$(CURDIR)/$(BIN_DIR) $(GO_TEST) -race -count=1 -timeout 20m $(E2E_PKGS)

# Tools the targets install, pinned, into $(TOOLS_DIR); the file name
# carries the version, so a new pin installs anew.
TOOLS_DIR := $(CURDIR)/$(OUT)/tools
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(TOOLS_DIR)/golangci-lint-$(GOLANGCI_LINT_VERSION)

$(GOLANGCI_LINT):
	@mkdir -p $(TOOLS_DIR)
	GOBIN=$(TOOLS_DIR) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	mv $(TOOLS_DIR)/golangci-lint $@

.PHONY: tools
tools: $(GOLANGCI_LINT) ## Install the pinned tools (golangci-lint) into _output/tools

.PHONY: lint
lint: $(GOLANGCI_LINT) ## go mod tidy check, go vet, gofmt, golangci-lint and govulncheck, for the plugin's and the control plane's modules (and go.mod tidiness of hack/prometheus)
	@go mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }
	@cd hack/controlplane && { go mod tidy -diff || { echo "hack/controlplane: go.mod/go.sum are not tidy: run go mod tidy there"; exit 1; }; }
	@cd hack/prometheus && { go mod tidy -diff || { echo "hack/prometheus: go.mod/go.sum are not tidy: run go mod tidy there"; exit 1; }; }
	go vet ./...
	cd hack/controlplane && go vet ./...
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './_output/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change:"; echo "$$unformatted"; exit 1; fi
	$(GOLANGCI_LINT) run ./...
	cd hack/controlplane && $(GOLANGCI_LINT) run --config ../../.golangci.yml ./...
	hack/vulncheck.sh

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## golangci-lint (pinned, linters in .golangci.yml) for both modules
	$(GOLANGCI_LINT) run ./...
	cd hack/controlplane && $(GOLANGCI_LINT) run --config ../../.golangci.yml ./...

.PHONY: vulncheck
vulncheck: ## govulncheck for both modules; fails when its database cannot be reached
	VULNCHECK=required hack/vulncheck.sh

.PHONY: clean
clean: cluster-down ## Remove build output (including the control plane binaries)
	rm -rf bin $(OUT) dist

.PHONY: help
help: ## List the targets
	@grep -E '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-16s %s\n", $$1, $$2}'

# Benchmark size; BENCH_PODS=100000 for the large run.
BENCH_PODS ?= 10000
BENCH_RUNS ?= 5
# Starts of the exporter, kube-state-metrics and the bare informer, in turn.
BENCH_STARTS ?= 5

# Results of the default size go to bench/RESULTS.md, others to
# bench/RESULTS-<pods>.md.
BENCH_RESULTS ?= bench/RESULTS$(if $(filter 10000,$(BENCH_PODS)),,-$(BENCH_PODS)).md

# A kube-state-metrics binary to measure beside the exporter in the same run;
# empty: the results say "not measured".
KSM ?=

# More flags of the harness (go run ./hack/bench -h), such as
# -commands 'group-by node' to measure only those one-shot commands.
BENCH_ARGS ?=

.PHONY: bench
bench: build controlplane ## Measure queries against the API server's list transfer and the exporter beside kube-state-metrics (KSM=binary) with BENCH_PODS pods; writes bench/RESULTS.md
	go run ./hack/bench --pods $(BENCH_PODS) --runs $(BENCH_RUNS) --starts $(BENCH_STARTS) --bin $(BIN_DIR) --plugin bin/kubectl-informer --results $(BENCH_RESULTS) --ksm '$(KSM)' $(BENCH_ARGS)

.PHONY: bench-compare
bench-compare: ## Compare the Go benchmarks with those of BASE (default HEAD~1) with benchstat
	hack/bench-compare.sh

# Each fuzz target runs for FUZZTIME; the seed corpora run in make test.
FUZZTIME ?= 20s

.PHONY: fuzz
# New interesting inputs are minimised for at most 2s each: the default
# minute, spent on a config file of a few KiB, would be most of FUZZTIME.
fuzz: ## Run every fuzz target for FUZZTIME (default 20s) each
	go test -run '^$$' -fuzz '^FuzzConfig$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./pkg/exporter
	go test -run '^$$' -fuzz '^FuzzExpression$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./pkg/indexers
	go test -run '^$$' -fuzz '^FuzzFastPath$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./pkg/indexers
	go test -run '^$$' -fuzz '^FuzzPodView$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./pkg/indexers/jsonval
	go test -run '^$$' -fuzz '^FuzzFlagParsing$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./cmd/kubectl-informer/app
	go test -run '^$$' -fuzz '^FuzzRequest$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 2s ./pkg/queryserver

.PHONY: ksm-compare
ksm-compare: build controlplane ## Serve the kube-state-metrics profile beside kube-state-metrics (KSM=binary) on the sample workload and compare every family, with FLAGS and the custom resource state config CRS given to both (report in _output/ksm-compare)
	KSM='$(KSM)' BIN=$(BIN_DIR) FLAGS='$(FLAGS)' CRS='$(CRS)' SETUP='bash hack/ksm-compare-states.sh' hack/ksm-compare.sh
