// vbom.ml/util is required, two levels down, by a module ExternalDNS
// lists but never builds (ambassador's kubectl 0.18), and its host is
// gone: this empty module stands in so the module graph resolves.
module vbom.ml/util
