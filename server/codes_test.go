package server_test

import (
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/ocrdraft/ocrdraft"
)

// TestNoClosedEnums: openapi.yaml has no closed enum anywhere. Generators turn an enum into a
// closed type (a Java enum, by openapi-generator's defaults) that fails to deserialise the whole
// response the day the server adds a value; codes are x-extensible-enum beside a plain string.
func TestNoClosedEnums(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(ocrdraft.Spec, &doc); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, n *yaml.Node)
	extensible := 0
	walk = func(path string, n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				switch k {
				case "enum":
					t.Errorf("%s has a closed enum; use x-extensible-enum", path)
				case "x-extensible-enum":
					extensible++
				}
				walk(path+"."+k, n.Content[i+1])
			}
		}
		for _, c := range n.Content {
			if n.Kind != yaml.MappingNode {
				walk(path, c)
			}
		}
	}
	walk("", &doc)
	if extensible < 3 {
		t.Errorf("%d x-extensible-enum lists, want at least the problem, warning and stage codes", extensible)
	}
}

// TestParseJSONFirst: /v1/parse lists application/json first, since generators take the first
// media type and only JSON can carry finishReason.
func TestParseJSONFirst(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]struct {
			RequestBody struct {
				Content yaml.Node
			} `yaml:"requestBody"`
		}
	}
	if err := yaml.Unmarshal(ocrdraft.Spec, &doc); err != nil {
		t.Fatal(err)
	}
	c := doc.Paths["/v1/parse"]["post"].RequestBody.Content
	if len(c.Content) == 0 || c.Content[0].Value != "application/json" {
		t.Errorf("/v1/parse's first media type is not application/json")
	}
}
