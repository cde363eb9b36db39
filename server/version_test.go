package server_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ocrdraft/ocrdraft"
	"github.com/ocrdraft/ocrdraft/internal/version"
	"github.com/ocrdraft/ocrdraft/server"
)

// TestVersion: GET /version is open (no key, as the probes) and answers the running build, or
// the one the Config names.
func TestVersion(t *testing.T) {
	e := newEnv(t, options{noModel: true, apiKeys: []string{"k"}})
	rec := e.do(httptest.NewRequest(http.MethodGet, "/version", nil))
	var got version.Info
	if err := json.Unmarshal(rec.Body.Bytes(), &got); rec.Code != http.StatusOK || err != nil {
		t.Fatalf("GET /version = %d %v: %s", rec.Code, err, rec.Body)
	}
	if want := version.Read(); got != want {
		t.Errorf("GET /version = %+v, want %+v", got, want)
	}

	want := version.Info{Version: "v1.2.3", Revision: "84a085e1", GoVersion: "go1.26.8", Modified: true}
	srv := server.New(server.Config{Spec: ocrdraft.Spec, Version: want})
	rec = httptest.NewRecorder()
	srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/version", nil))
	if body := strings.TrimSpace(rec.Body.String()); body != `{"version":"v1.2.3","revision":"84a085e1","goVersion":"go1.26.8","modified":true}` {
		t.Errorf("GET /version = %s", body)
	}
}

// TestMetricsElsewhere: with MetricsElsewhere, /metrics is not on the API's routes (404), and
// the Metrics still serve their own handler; without it, /metrics is there.
func TestMetricsElsewhere(t *testing.T) {
	for _, elsewhere := range []bool{false, true} {
		srv := server.New(server.Config{Spec: ocrdraft.Spec, MetricsElsewhere: elsewhere})
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		want := http.StatusOK
		if elsewhere {
			want = http.StatusNotFound
		}
		if rec.Code != want {
			t.Errorf("MetricsElsewhere %v: GET /metrics = %d, want %d", elsewhere, rec.Code, want)
		}
	}
}

// TestJSONNotHTMLEscaped: answers keep <, > and & as written (a reference range <0.5, a test
// named A&B), in results and in problem documents alike.
func TestJSONNotHTMLEscaped(t *testing.T) {
	e := newEnv(t, options{noModel: true})
	reply := `{"title":"A&B <panel>","indicators":[{"itemName":"C&D","valueNum":null,"valueText":"<0.5","unit":null}]}`
	rec := e.do(jsonReq("/v1/parse", map[string]string{"reply": reply}))
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	for _, want := range []string{`"A&B <panel>"`, `"C&D"`, `"<0.5"`} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("answer lacks %s:\n%s", want, rec.Body)
		}
	}
	rec = e.do(jsonReq("/v1/parse", map[string]string{"reply": "<html>no & JSON here</html>"}))
	body := rec.Body.String()
	if rec.Code != http.StatusUnprocessableEntity || strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) {
		t.Errorf("problem escapes HTML: %d %s", rec.Code, body)
	}
}
