package metrics

import (
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/ocrdraft/ocrdraft/internal/doctable"
	"github.com/ocrdraft/ocrdraft/schema"
)

var update = flag.Bool("update", false, "rewrite the generated tables in docs/")

// TestDocs: docs/operations.md's table of metrics is generated from the registry itself, after
// every recording method has run once, and must list every collector the service registers.
func TestDocs(t *testing.T) {
	m := New()
	m.Request("/v1/extract", "POST", 200, time.Millisecond)
	m.CallStarted()("ok", time.Millisecond)
	m.Queued()(time.Millisecond, true)
	m.RequestQueued()(time.Millisecond, true)
	m.UploadQueued()(time.Millisecond, true)
	m.Extracting()()
	fr := "stop"
	m.Page(schema.PageMeta{Attempts: 1, FinishReason: &fr, Indicators: 1, Dropped: 1, Truncated: true, SentOnce: true, BytesIn: 1, BytesSent: 1,
		Verify: &schema.PageVerify{Status: schema.VerifyDisagreed, Attempts: 1, Usage: schema.Usage{PromptTokens: 1, CompletionTokens: 1}}})

	fams, err := m.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(doctable.Row("metric", "type", "labels", "what"))
	b.WriteString("|---|---|---|---|\n")
	n := 0
	for _, f := range fams {
		if !strings.HasPrefix(f.GetName(), namespace+"_") {
			continue
		}
		n++
		var labels []string
		if ms := f.GetMetric(); len(ms) > 0 {
			for _, l := range ms[0].GetLabel() {
				labels = append(labels, l.GetName())
			}
		}
		b.WriteString(doctable.Row("`"+f.GetName()+"`", strings.ToLower(f.GetType().String()), strings.Join(labels, ", "), f.GetHelp()))
	}
	if n != m.own.n {
		t.Fatalf("%d of the %d registered metrics have a series: make this test record the others too", n, m.own.n)
	}
	b.WriteString(doctable.Row("`go_*`, `process_*`", "", "", "the Go runtime and the process (`process_resident_memory_bytes` …)"))
	doctable.Check(t, "../../docs/operations.md", "metrics", b.String(), *update)
}
