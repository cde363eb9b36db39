// Package heif holds the HEIC decoder intake runs: libheif v1.18.2 and libde265 v1.0.15 compiled
// to WebAssembly, as github.com/gen2brain/heic v0.4.5 ships it (lib/heif.wasm.gz, built by
// src/Makefile and src/heif.c, copied unchanged). intake used to reach that module's unexported
// variable with go:linkname; a copy of our own needs no such reach, leaves the module's system
// libheif loader (purego) out of the binary, and TestSameAsModule keeps it byte-for-byte the
// pinned module's, so an upgrade of the module is one `cp` and the test says when it is due.
//
// Licences: LICENSE.libheif and LICENSE.libde265 (LGPL-3.0), LICENSE.gen2brain-heic (MIT); the
// repository's NOTICE says what a distributor must ship.
package heif

import _ "embed"

// Wasm is the gzip-compressed WebAssembly module. Callers must not modify it.
//
//go:embed heif.wasm.gz
var Wasm []byte
