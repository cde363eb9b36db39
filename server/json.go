package server

import (
	"encoding/json"
	"io"

	"github.com/labstack/echo/v4"
)

// jsonSerializer is echo's JSON serializer without HTML escaping: a reference range of <0.5 or a
// test named "A&B" reaches the caller as written, not as \u003c0.5. The answers are
// application/json, never HTML, so the escaping protects nothing.
type jsonSerializer struct{ echo.DefaultJSONSerializer }

func (jsonSerializer) Serialize(c echo.Context, v any, indent string) error {
	return encodeJSON(c.Response(), v, indent)
}

// encodeJSON writes v as one line of JSON (indented when indent is set) without HTML escaping.
func encodeJSON(w io.Writer, v any, indent string) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(v)
}
