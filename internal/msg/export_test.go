package msg

import "github.com/ocrdraft/ocrdraft/schema"

// Missing says whether w has a row, and which params its row's sentence in lang needs that w
// does not give (its params, or the facts of its page and path).
func Missing(w schema.Warning, lang string) (bool, []string) {
	r := rowOf(w.Code, w.Reason)
	if r == nil {
		return false, nil
	}
	_, missing := render(r, w, lang)
	return true, missing
}
