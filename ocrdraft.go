// Package ocrdraft holds what the whole service shares at its root: the OpenAPI document, which
// the binary serves and the tests check against the code.
package ocrdraft

import _ "embed"

// Spec is openapi.yaml.
//
//go:embed openapi.yaml
var Spec []byte
