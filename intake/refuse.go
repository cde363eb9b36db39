package intake

// Refuse returns the error PreparePage would refuse data with from its bytes alone — an empty
// file, one over MaxBytes, a format that is not accepted (a ZIP, a video) — or nil, doing no
// work beyond its first bytes: a caller with several uploads can answer such a refusal before it
// splits or prepares the others. The checks that need a file's headers are PreparePage's.
func (p *Preparer) Refuse(data []byte) error {
	return p.refuse(data, lookup(data))
}
