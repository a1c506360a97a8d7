# TKG lifecycle conformance harness.
#
#   make e2e                      full local run (vcsim + kind + CAPD)
#   make e2e FOCUS=move           bootstrap -> management -> move, then stop
#   make e2e DRY_RUN=1 FOCUS=ova  list what would run, run nothing
#   make help                     every target and variable

SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

ROOT       := $(CURDIR)
BIN        := $(ROOT)/bin
GINKGO     := $(BIN)/ginkgo
HARNESS    := $(BIN)/harness

## Variables (override on the command line)
CONFIG           ?= config/local.yaml##        harness profile: config/local.yaml or config/vsphere.yaml
CONFIG_OVERRIDES ?=##                          comma-separated YAML files merged over CONFIG
FOCUS            ?=##                          stage names (run them and what they need), or a regex on spec names
SKIP             ?=##                          regex of spec names to skip
LABELS           ?=##                          extra ginkgo label filter, e.g. '!slow'
ARTIFACTS        ?=##                          run folder (default artifacts/<run-id>); with RESUME=1 the kept run
RESUME           ?=##                          1: re-attach to stages that passed in ARTIFACTS' state.json
SKIP_CLEANUP     ?=##                          1: keep everything the run created
DRY_RUN          ?=##                          1: print the stages and specs that would run, run nothing
GINKGO_ARGS      ?=##                          more ginkgo flags

RUN_ID := $(shell date -u +%Y%m%d-%H%M%S)
ifeq ($(ARTIFACTS),)
ifeq ($(RESUME),1)
ARTIFACTS := $(shell readlink -f artifacts/latest 2>/dev/null)
else
ARTIFACTS := $(ROOT)/artifacts/$(RUN_ID)
endif
endif
override ARTIFACTS := $(abspath $(ARTIFACTS))

# FOCUS and LABELS become ginkgo flags through `harness select`, which reads
# the stage registry (suites/registry.go): FOCUS made only of stage names is a
# label filter (every stage carries the labels of the stages that need it, so
# it selects exactly the stages and their prerequisites); anything else is a
# --focus regex. No stage list is kept here.
SELECT = mapfile -t sel < <($(HARNESS) select -focus '$(FOCUS)' -labels '$(LABELS)')

.PHONY: help
help: ## List targets and variables
	@echo "Targets:"
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sed -E 's/:.*## /\t/' | awk -F'\t' '{printf "  %-14s %s\n", $$1, $$2}'
	@echo
	@echo "Variables:"
	@grep -hE '^[A-Z_]+ +\?=.*## ' $(MAKEFILE_LIST) | sed -E 's/ +\?=([^#]*)## +/\t\1\t/' | awk -F'\t' '{printf "  %-17s %s\n", $$1, $$3}'
	@echo
	@$(MAKE) -s $(HARNESS) && $(HARNESS) plan -v

$(BIN):
	@mkdir -p $(BIN)

.PHONY: tools
tools: $(GINKGO) $(HARNESS) ## Build ginkgo and the harness CLI into bin/

$(GINKGO): go.mod | $(BIN)
	go build -o $(GINKGO) github.com/onsi/ginkgo/v2/ginkgo

.PHONY: $(HARNESS)
$(HARNESS): | $(BIN)
	@go build -o $(HARNESS) ./e2e/cmd/harness

.PHONY: validate
validate: $(HARNESS) ## Validate CONFIG (+ CONFIG_OVERRIDES) and exit: every problem at once
	@$(HARNESS) validate -config $(CONFIG) -overrides '$(CONFIG_OVERRIDES)'

.PHONY: test
test: ## Unit and integration tests (vcsim in-process; no Docker needed)
	go test -count=1 ./framework/... ./suites/... ./e2e/cmd/...

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

.PHONY: e2e
e2e: $(GINKGO) $(HARNESS) ## Run the lifecycle suite (FOCUS, SKIP, LABELS, CONFIG, ARTIFACTS, RESUME, SKIP_CLEANUP, DRY_RUN)
ifeq ($(DRY_RUN),1)
	@$(HARNESS) plan -focus '$(FOCUS)'
	@$(SELECT); $(GINKGO) --dry-run -v --no-color "$${sel[@]}" \
	  $(if $(SKIP),--skip='$(SKIP)') ./e2e -- -e2e.config=$(abspath $(CONFIG)) \
	  | grep -E '^(TKG lifecycle|Ran |Will run)' || true
else
	@$(HARNESS) validate -config $(CONFIG) -overrides '$(CONFIG_OVERRIDES)'
	@mkdir -p $(ARTIFACTS) $(ROOT)/artifacts && chmod 700 $(ARTIFACTS) && ln -sfn $(ARTIFACTS) $(ROOT)/artifacts/latest
	@echo "artifacts: $(ARTIFACTS)"
	set -o pipefail; umask 077; rm -f $(ARTIFACTS)/console.log; $(SELECT); $(GINKGO) -v --no-color --fail-on-empty --poll-progress-after=5m --poll-progress-interval=2m \
	  --timeout=$$($(HARNESS) get timeout -config $(CONFIG) -overrides '$(CONFIG_OVERRIDES)') \
	  "$${sel[@]}" $(if $(SKIP),--skip='$(SKIP)') \
	  $(GINKGO_ARGS) ./e2e -- \
	  -e2e.config=$(abspath $(CONFIG)) -e2e.config-overrides='$(CONFIG_OVERRIDES)' \
	  -e2e.artifacts-folder=$(ARTIFACTS) $(if $(filter 1,$(RESUME)),-e2e.resume) \
	  $(if $(filter 1,$(SKIP_CLEANUP)),-e2e.skip-cleanup) 2>&1 | tee $(ARTIFACTS)/console.log
endif

.PHONY: clean-run
clean-run: $(HARNESS) ## Delete what a kept run (ARTIFACTS=<run folder>) left behind, from its state.json
	$(HARNESS) cleanup -artifacts $(ARTIFACTS)

.PHONY: testbed
testbed: ## Prepare Docker and the offline images with ../shared/testbed (root)
	bash scripts/testbed.sh

.PHONY: clean
clean: ## Remove bin/ (artifacts/ is kept)
	rm -rf $(BIN)

MANAGEMENT_KUBECONFIG       ?=##               make verify: kubeconfig of a management cluster
WORKLOAD_KUBECONFIG         ?=##               make verify: kubeconfig of a workload cluster
WINDOWS_WORKLOAD_KUBECONFIG ?=##               make verify: kubeconfig of a Windows workload cluster

.PHONY: verify
verify: $(GINKGO) $(HARNESS) ## Run placement and packages against existing clusters (MANAGEMENT_KUBECONFIG, WORKLOAD_KUBECONFIG, ...)
	$(SELECT); $(GINKGO) -v --no-color --fail-on-empty "$${sel[@]}" ./e2e/verify -- \
	  -e2e.config=$(abspath $(CONFIG)) -e2e.artifacts-folder=$(ARTIFACTS) \
	  $(if $(MANAGEMENT_KUBECONFIG),-e2e.management-kubeconfig=$(abspath $(MANAGEMENT_KUBECONFIG))) \
	  $(if $(WORKLOAD_KUBECONFIG),-e2e.workload-kubeconfig=$(abspath $(WORKLOAD_KUBECONFIG))) \
	  $(if $(WINDOWS_WORKLOAD_KUBECONFIG),-e2e.windows-workload-kubeconfig=$(abspath $(WINDOWS_WORKLOAD_KUBECONFIG)))
