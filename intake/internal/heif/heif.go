// Package heif is the HEIC decoder intake runs, with image/jpeg's surface: DecodeConfig reads a
// HEIF container's boxes (the primary image's size, how it is turned, what it is made of),
// Cost and Plan say what decoding it holds and hands libheif, and a Decoder's Decode decodes it,
// upright. Its errors are plain (ErrMemory, ErrPictures, damage); it knows nothing of limits
// beyond the memory Decode is given.
//
// The decoder is libheif v1.18.2 and libde265 v1.0.15 compiled to WebAssembly, as
// github.com/gen2brain/heic v0.4.5 ships it (lib/heif.wasm.gz, built by src/Makefile and
// src/heif.c, copied unchanged), run by wazero in a fresh instance for each file, its memory
// capped (intake/internal/wasmmem). That module's own Decode switches to a system libheif.so
// whenever one can be loaded, with different behaviour and no bounds, so it is never called and
// not linked: a copy of our own needs no go:linkname into it, leaves its system libheif loader
// (purego) out of the binary, and TestSameAsModule keeps it byte-for-byte the pinned module's,
// so an upgrade of the module is one `cp` and the test says when it is due. A grid (a phone's
// photo) is decoded tile by tile here (grid.go).
//
// A Pool (pool.go) runs the same Decode in worker processes, this executable started again
// (worker.go: an init func, run by every binary that links this package, test binaries
// included, makes such a process serve decode jobs on stdin and stdout and exit), so that a
// decode can be held to a CPU budget and stopped at once by killing its process, which
// libheif's WebAssembly cannot be in this one.
//
// Licences: LICENSE.libheif and LICENSE.libde265 (LGPL-3.0), LICENSE.gen2brain-heic (MIT); the
// repository's NOTICE says what a distributor must ship.
package heif

import _ "embed"

// Wasm is the gzip-compressed WebAssembly module. Callers must not modify it.
//
//go:embed heif.wasm.gz
var Wasm []byte
