package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/jobs"
	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// SpecMarker starts the generated part of openapi.yaml: everything after it is rendered from the
// Go types by SpecComponents, and a test keeps the file equal to that rendering.
const SpecMarker = "    # Generated from the Go types: go test ./server -run TestSpec -update. Do not edit below.\n"

// specTypes are the schemas openapi.yaml gets from Go types, by component name: the contract's,
// and the responses and problems of this API.
var specTypes = []struct {
	name string
	t    reflect.Type
}{
	{"OcrDraft", reflect.TypeFor[schema.OcrDraft]()},
	{"OcrIndicator", reflect.TypeFor[schema.OcrIndicator]()},
	{"Warning", reflect.TypeFor[schema.Warning]()},
	{"Result", reflect.TypeFor[schema.Result]()},
	{"ExtractRequest", reflect.TypeFor[ExtractRequest]()},
	{"PageImage", reflect.TypeFor[PageImage]()},
	{"ExtractResponse", reflect.TypeFor[extract.Response]()},
	{"SentImage", reflect.TypeFor[schema.SentImage]()},
	{"Meta", reflect.TypeFor[schema.Meta]()},
	{"PageMeta", reflect.TypeFor[schema.PageMeta]()},
	{"Evidence", reflect.TypeFor[schema.Evidence]()},
	{"EvidenceSource", reflect.TypeFor[schema.EvidenceSource]()},
	{"PageVerify", reflect.TypeFor[schema.PageVerify]()},
	{"VerifyTotal", reflect.TypeFor[schema.VerifyTotal]()},
	{"VerifyStatus", reflect.TypeFor[schema.VerifyStatus]()},
	{"Box", reflect.TypeFor[schema.Box]()},
	{"Usage", reflect.TypeFor[schema.Usage]()},
	{"ParseRequest", reflect.TypeFor[ParseRequest]()},
	{"ParseResponse", reflect.TypeFor[ParseResponse]()},
	{"ParseMeta", reflect.TypeFor[ParseMeta]()},
	{"Problem", reflect.TypeFor[problem.Document]()},
	{"ProblemField", reflect.TypeFor[problem.Field]()},
	{"ProblemCode", reflect.TypeFor[problem.Code]()},
	{"WarningCode", reflect.TypeFor[schema.WarningCode]()},
	{"ParseStage", reflect.TypeFor[schema.ParseStage]()},
	{"JobRequest", reflect.TypeFor[JobRequest]()},
	{"Job", reflect.TypeFor[jobs.Job]()},
	{"JobStatus", reflect.TypeFor[jobs.Status]()},
}

// specGenerator renders specTypes with their enums from the code tables.
func specGenerator() schema.Generator {
	g := schema.Contract(schema.OpenAPI)
	g.Refs = make(map[reflect.Type]string)
	for _, st := range specTypes {
		g.Refs[st.t] = st.name
	}
	codes := make([]string, len(problem.Codes))
	for i, c := range problem.Codes {
		codes[i] = string(c.Code)
	}
	g.Enums[reflect.TypeFor[problem.Code]()] = codes
	g.Enums[reflect.TypeFor[schema.ParseStage]()] = enum(schema.ParseStages)
	g.Enums[reflect.TypeFor[schema.EvidenceSource]()] = enum(schema.EvidenceSources)
	g.Enums[reflect.TypeFor[schema.VerifyStatus]()] = enum(schema.VerifyStatuses)
	g.Enums[reflect.TypeFor[jobs.Status]()] = enum(jobs.Statuses)
	return g
}

// SpecComponents renders the generated part of openapi.yaml: the component schemas, indented to
// sit under components.schemas.
func SpecComponents() ([]byte, error) {
	g := specGenerator()
	root := &yaml.Node{Kind: yaml.MappingNode}
	for _, st := range specTypes {
		js, err := json.Marshal(g.Schema(st.t))
		if err != nil {
			return nil, err
		}
		n, err := jsonToNode(js)
		if err != nil {
			return nil, err
		}
		root.Content = append(root.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: st.name}, n)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line != "" {
			out.WriteString("    " + line)
		}
	}
	return []byte(out.String()), nil
}

// jsonToNode turns JSON into a YAML node tree, keeping key order.
func jsonToNode(b []byte) (*yaml.Node, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func() (*yaml.Node, error)
	walk = func() (*yaml.Node, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case json.Delim:
			n := &yaml.Node{Kind: yaml.MappingNode}
			if t == '[' {
				n.Kind = yaml.SequenceNode
			}
			for dec.More() {
				if n.Kind == yaml.MappingNode {
					k, err := dec.Token()
					if err != nil {
						return nil, err
					}
					n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k.(string)})
				}
				v, err := walk()
				if err != nil {
					return nil, err
				}
				n.Content = append(n.Content, v)
			}
			_, err := dec.Token() // the closing delimiter
			return n, err
		case string:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: t}, nil
		case json.Number:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: t.String()}, nil
		case bool:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(t)}, nil
		case nil:
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}, nil
		}
		return nil, fmt.Errorf("unexpected JSON token %v", tok)
	}
	return walk()
}

// enum is a code table's values as strings, for its enum in the spec.
func enum[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}
