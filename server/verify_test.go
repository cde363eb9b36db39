package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft/extract"
	"github.com/ocrdraft/ocrdraft/internal/fakeopenai"
	"github.com/ocrdraft/ocrdraft/prompt"
)

// TestVerifyAndBoxes: through the server, a second read that disagrees and a model's box give a
// response that openapi.yaml describes (do checks it): reads_disagree at the field with both
// readings, meta.pages[0] with the image's size and its verify, and the row's box in
// meta.evidence with source model; the metrics count the second read.
func TestVerifyAndBoxes(t *testing.T) {
	e := newEnv(t, options{verify: extract.VerifyAll, boxes: prompt.BoxesThousandths})
	second := strings.SplitN(prompt.Second(), "\n", 2)[0]
	e.model.Route(fakeopenai.Asking(second), fakeopenai.Reply(`{"results":[{"name":"总胆固醇","result":"5.36","unit":"mmol/L","range":"3.1-5.2"}]}`))
	e.model.Default(fakeopenai.Reply(`{"indicators":[{"itemName":"总胆固醇","valueNum":5.86,"unit":"mmol/L","refText":"3.1-5.2","bbox_2d":[100,250,500,500]}]}`))
	rec := e.do(extractReq(t, page))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var res struct {
		Warnings []struct {
			Code   string
			Path   string
			Params map[string]string
		}
		Meta struct {
			Pages []struct {
				Width, Height int
				Verify        struct{ Status string }
			}
			Verify   struct{ Pages, Attempts int }
			Evidence []struct {
				Path, Source string
				Page         int
				Box          struct{ X, Y, W, H int }
			}
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || res.Warnings[0].Code != "reads_disagree" || res.Warnings[0].Path != "indicators[0].valueNum" ||
		res.Warnings[0].Params["first"] != "5.86" || res.Warnings[0].Params["second"] != "5.36" {
		t.Errorf("warnings %+v", res.Warnings)
	}
	if p := res.Meta.Pages[0]; p.Width != 120 || p.Height != 160 || p.Verify.Status != "disagreed" || res.Meta.Verify.Attempts != 1 {
		t.Errorf("meta pages %+v, verify %+v", res.Meta.Pages, res.Meta.Verify)
	}
	if ev := res.Meta.Evidence; len(ev) != 1 || ev[0].Path != "indicators[0]" || ev[0].Source != "model" || ev[0].Page != 1 ||
		ev[0].Box.X != 12 || ev[0].Box.Y != 40 || ev[0].Box.W != 48 || ev[0].Box.H != 40 {
		t.Errorf("evidence %+v", ev)
	}
	if n := e.metric("ocrdraft_verify_pages_total", "status", "disagreed"); n != 1 {
		t.Errorf("verify_pages_total{disagreed} = %v", n)
	}
}
