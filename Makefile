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
# The lifecycle suite, compiled; ginkgo runs it in e2e/, as it would the package.
# (Sources and the suite binary live in this checkout even when ROOT, the
# folder artifacts/ and bin/ go to, is another.)
E2E_TEST   := $(CURDIR)/e2e/e2e.test
# The verify suite, compiled the same way: ginkgo would otherwise link it on
# every make verify into e2e/verify/verify.test and remove it after, so two
# make verify at once ran or removed each other's binary.
VERIFY_TEST := $(CURDIR)/e2e/verify/verify.test
# What the harness CLI and the suite are linked from: they are relinked only
# when one of these changed, instead of on every make e2e (~7 s each).
GO_SRC     := $(shell find $(CURDIR)/e2e $(CURDIR)/suites $(CURDIR)/framework -name '*.go' -not -name '*_test.go') \
              $(wildcard $(CURDIR)/e2e/*_test.go) $(CURDIR)/go.mod $(CURDIR)/go.sum

## Variables (override on the command line)
CONFIG           ?= config/local.yaml##        harness profile: config/local.yaml or config/vsphere.yaml
CONFIG_OVERRIDES ?=##                          comma-separated YAML files merged over CONFIG
FOCUS            ?=##                          stage names (run them and what they need), or a regex on spec names
SKIP             ?=##                          regex of spec names to skip
LABELS           ?=##                          extra ginkgo label filter, e.g. '!slow'
ARTIFACTS        ?=##                          run folder (default artifacts/<run-id>); with RESUME=1 the kept run
RESUME           ?=##                          1: re-attach to stages that passed in ARTIFACTS' (default artifacts/latest) state.json
RESUME_FOREIGN   ?=##                          1: let RESUME=1 attach to (and clean up) a run of another OS user
QUALIFY          ?=##                          1: the release-qualification run: day one, then upgrade, provider-upgrade, management-upgrade, scale, remediate
SKIP_CLEANUP     ?=##                          1: keep everything the run created
DRY_RUN          ?=##                          1: print the stages and specs that would run, run nothing
GINKGO_ARGS      ?=##                          more ginkgo flags
LEASE            ?=##                          Boskos URL: lease the testbed from its pool (merges config/lease.overrides.yaml)

# Overrides are given relative to this folder; the suite runs in e2e/, so
# each becomes absolute here.
comma := ,
empty :=
space := $(empty) $(empty)
override CONFIG_OVERRIDES := $(subst $(space),$(comma),$(strip $(foreach f,$(subst $(comma),$(space),$(CONFIG_OVERRIDES)),$(abspath $(f)))))
# LEASE=<url> is config/lease.overrides.yaml merged last, with BOSKOS_URL set.
ifneq ($(strip $(LEASE)),)
export BOSKOS_URL := $(LEASE)
override CONFIG_OVERRIDES := $(if $(strip $(CONFIG_OVERRIDES)),$(CONFIG_OVERRIDES)$(comma))$(ROOT)/config/lease.overrides.yaml
endif

# The run folder is picked by `harness prepare-run` in the e2e recipe: a new
# artifacts/<run-id> (UTC time + a random short ID, created exclusively), or
# ARTIFACTS (relative to this folder, or absolute), checked to be free (no
# other process holds its lock, its state lists nothing that still exists);
# with RESUME=1, ARTIFACTS or artifacts/latest, which must be your own run
# (RESUME_FOREIGN=1 otherwise). artifacts/latest then points at it.
PREPARE_RUN = $(HARNESS) prepare-run -root '$(ROOT)/artifacts' -artifacts '$(ARTIFACTS)' \
  $(if $(filter 1,$(RESUME)),-resume) $(if $(filter 1,$(RESUME_FOREIGN)),-foreign)

# FOCUS and LABELS become ginkgo flags through `harness select`, which reads
# the stage registry (suites/registry.go): FOCUS made only of stage names is a
# label filter (every stage carries the labels of the stages that need it, so
# it selects exactly the stages and their prerequisites); anything else is a
# --focus regex. No stage list is kept here. The day-two stages (upgrade,
# scale, remediate) run when FOCUS names them or with QUALIFY=1.
SELECT = mapfile -t sel < <($(HARNESS) select -focus '$(FOCUS)' -labels '$(LABELS)' $(if $(filter 1,$(QUALIFY)),-qualify))

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

# Built beside and renamed into place: runs started together (shared
# testbeds) never execute a half-written binary.
$(HARNESS): $(GO_SRC) | $(BIN)
	@go build -o $(HARNESS).$$$$ ./e2e/cmd/harness && mv -f $(HARNESS).$$$$ $(HARNESS)

$(E2E_TEST): $(GO_SRC)
	@cd e2e && go test -c -o $(E2E_TEST).$$$$ . && mv -f $(E2E_TEST).$$$$ $(E2E_TEST)

$(VERIFY_TEST): $(GO_SRC) $(wildcard $(CURDIR)/e2e/verify/*_test.go)
	@cd e2e/verify && go test -c -o $(VERIFY_TEST).$$$$ . && mv -f $(VERIFY_TEST).$$$$ $(VERIFY_TEST)

.PHONY: verify-suite
verify-suite: $(VERIFY_TEST) ## Compile the verify suite (make verify does when a source changed); for several make verify at once

.PHONY: validate
validate: $(HARNESS) ## Validate CONFIG (+ CONFIG_OVERRIDES) and exit: every problem at once
	@$(HARNESS) validate -config $(CONFIG) -overrides '$(CONFIG_OVERRIDES)'

.PHONY: test
test: ## Unit and integration tests (vcsim in-process; no Docker needed)
	go test -count=1 ./framework/... ./suites/... ./e2e/cmd/... ./scripts/...

.PHONY: lint
lint: ## gofmt and go vet
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

.PHONY: e2e
e2e: $(GINKGO) $(HARNESS) $(E2E_TEST) ## Run the lifecycle suite (FOCUS, SKIP, LABELS, QUALIFY, CONFIG, ARTIFACTS, RESUME, SKIP_CLEANUP, DRY_RUN)
ifeq ($(DRY_RUN),1)
	@$(HARNESS) validate -config '$(CONFIG)' -overrides '$(CONFIG_OVERRIDES)'
	@$(if $(filter 1,$(RESUME)),$(PREPARE_RUN) -dry-run >/dev/null)
	@$(HARNESS) plan -focus '$(FOCUS)' -config '$(CONFIG)' -overrides '$(CONFIG_OVERRIDES)' $(if $(filter 1,$(QUALIFY)),-qualify)
	@$(SELECT); $(GINKGO) --dry-run -v --no-color "$${sel[@]}" \
	  $(if $(SKIP),--skip='$(SKIP)') $(E2E_TEST) -- -e2e.config=$(abspath $(CONFIG)) -e2e.config-overrides='$(CONFIG_OVERRIDES)' \
	  | grep -E '^(TKG lifecycle|Ran |Will run)' || true
else
	@$(HARNESS) validate -config '$(CONFIG)' -overrides '$(CONFIG_OVERRIDES)'
	@set -eo pipefail; umask 077; dir=$$($(PREPARE_RUN)); chmod 700 "$$dir"; \
	  mkdir -p '$(ROOT)/artifacts' && ln -sfn "$$dir" '$(ROOT)/artifacts/latest'; \
	  echo "artifacts: $$dir"; \
	  $(SELECT); set -x; \
	  $(GINKGO) -v --no-color --fail-on-empty --poll-progress-after=5m --poll-progress-interval=2m \
	  --timeout=$$($(HARNESS) get timeout -config '$(CONFIG)' -overrides '$(CONFIG_OVERRIDES)') \
	  "$${sel[@]}" $(if $(SKIP),--skip='$(SKIP)') \
	  $(GINKGO_ARGS) $(E2E_TEST) -- \
	  -e2e.config=$(abspath $(CONFIG)) -e2e.config-overrides='$(CONFIG_OVERRIDES)' \
	  -e2e.artifacts-folder="$$dir" $(if $(filter 1,$(RESUME)),-e2e.resume) \
	  $(if $(filter 1,$(RESUME_FOREIGN)),-e2e.resume-foreign) \
	  $(if $(filter 1,$(SKIP_CLEANUP)),-e2e.skip-cleanup) 2>&1 | tee -i $(if $(filter 1,$(RESUME)),-a) "$$dir/console.log"
endif

.PHONY: e2e-vsphere-sim
e2e-vsphere-sim: $(GINKGO) $(HARNESS) ## Rehearse CONFIG=config/vsphere.yaml against a vcsim server with real CAPV (FOCUS, SKIP, RESUME, SKIP_CLEANUP)
	bash scripts/e2e-vsphere-sim.sh

.PHONY: clean-run
clean-run: $(HARNESS) ## Delete what a kept run (ARTIFACTS=<run folder>) left behind, from its state.json
	$(HARNESS) cleanup -artifacts '$(ARTIFACTS)' -config '$(CONFIG)' -overrides '$(CONFIG_OVERRIDES)'

.PHONY: sweep-host
sweep-host: ## List what runs left on this Docker host (kind/CAPD/vcsim containers, networks, volumes); REMOVE=1 deletes it all (a host no one else uses)
	bash scripts/sweep-host.sh $(if $(filter 1,$(REMOVE)),--remove)

.PHONY: testbed
testbed: ## Prepare Docker and the offline images with ../shared/testbed (root)
	bash scripts/testbed.sh

.PHONY: clean
clean: ## Remove bin/ (artifacts/ is kept)
	rm -rf $(BIN)

MANAGEMENT_KUBECONFIG       ?=##               make verify: kubeconfig of a management cluster
WORKLOAD_KUBECONFIG         ?=##               make verify: kubeconfig of a workload cluster
WINDOWS_WORKLOAD_KUBECONFIG ?=##               make verify: kubeconfig of a Windows workload cluster
READ_ONLY                   ?=##               make verify: 1 = write nothing to the clusters (smoke left out, reported as skipped)

.PHONY: verify
verify: $(GINKGO) $(HARNESS) $(VERIFY_TEST) ## Run health, smoke, placement and packages against existing clusters (MANAGEMENT_KUBECONFIG, WORKLOAD_KUBECONFIG, READ_ONLY, ...)
	$(SELECT); $(GINKGO) -v --no-color --fail-on-empty "$${sel[@]}" $(VERIFY_TEST) -- \
	  $(if $(filter 1,$(READ_ONLY)),-e2e.read-only) \
	  -e2e.config=$(abspath $(CONFIG)) $(if $(CONFIG_OVERRIDES),-e2e.config-overrides='$(CONFIG_OVERRIDES)') \
	  $(if $(ARTIFACTS),-e2e.artifacts-folder=$(abspath $(ARTIFACTS))) \
	  $(if $(MANAGEMENT_KUBECONFIG),-e2e.management-kubeconfig=$(abspath $(MANAGEMENT_KUBECONFIG))) \
	  $(if $(WORKLOAD_KUBECONFIG),-e2e.workload-kubeconfig=$(abspath $(WORKLOAD_KUBECONFIG))) \
	  $(if $(WINDOWS_WORKLOAD_KUBECONFIG),-e2e.windows-workload-kubeconfig=$(abspath $(WINDOWS_WORKLOAD_KUBECONFIG)))
