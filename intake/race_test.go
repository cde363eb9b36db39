//go:build race

package intake

// raceEnabled says the race detector's runtime is in: it allocates more than the decoders do
// (a growing bytes.Buffer several times over), so what a test measures of allocation then is
// not the decoder's.
const raceEnabled = true
