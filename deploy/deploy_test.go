// Package deploy holds deployment examples; its test keeps them valid and in step with the code.
package deploy

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/ocrdraft/ocrdraft/internal/metrics"
	"github.com/ocrdraft/ocrdraft/jobs"
)

// TestKubernetes decodes every document of kubernetes.yaml strictly into the Kubernetes API's
// own Go types (an unknown or mistyped field fails), then checks that the pieces fit together
// and fit the service: labels and selectors, probe paths, settings that exist, the memory limit
// above GOMEMLIMIT, the grace period above the shutdown timeout, the autoscaler's metric.
func TestKubernetes(t *testing.T) {
	src, err := os.ReadFile("kubernetes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var (
		dep appsv1.Deployment
		svc corev1.Service
		pdb policyv1.PodDisruptionBudget
		so  scaledObject
	)
	seen := map[string]bool{}
	for _, doc := range bytes.Split(src, []byte("\n---\n")) {
		var head struct{ Kind string }
		if err := yaml.Unmarshal(doc, &head); err != nil {
			t.Fatal(err)
		}
		var into any
		switch head.Kind {
		case "Deployment":
			into = &dep
		case "Service":
			into = &svc
		case "PodDisruptionBudget":
			into = &pdb
		case "ScaledObject":
			into = &so
		default:
			t.Fatalf("unexpected kind %q", head.Kind)
		}
		if err := yaml.UnmarshalStrict(doc, into); err != nil {
			t.Fatalf("%s: %v", head.Kind, err)
		}
		seen[head.Kind] = true
	}
	if len(seen) != 4 {
		t.Fatalf("kinds = %v, want a Deployment, a Service, a PodDisruptionBudget and a ScaledObject", seen)
	}

	pod := labels.Set(dep.Spec.Template.Labels)
	sel := func(what string, ls map[string]string) {
		if len(ls) == 0 || !labels.SelectorFromSet(ls).Matches(pod) {
			t.Errorf("%s selector %v does not select the pods %v", what, ls, pod)
		}
	}
	sel("Deployment", dep.Spec.Selector.MatchLabels)
	sel("Service", svc.Spec.Selector)
	sel("PodDisruptionBudget", pdb.Spec.Selector.MatchLabels)
	if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() >= int(*dep.Spec.Replicas) {
		t.Errorf("PodDisruptionBudget minAvailable %v must be below the %d replicas, or no node can drain", pdb.Spec.MinAvailable, *dep.Spec.Replicas)
	}
	if r := so.Spec.ScaleTargetRef; r.Kind != "Deployment" || r.Name != dep.Name {
		t.Errorf("ScaledObject scales %s/%s, not the Deployment %s", r.Kind, r.Name, dep.Name)
	}

	if len(dep.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("want one container")
	}
	c := dep.Spec.Template.Spec.Containers[0]
	ports := map[string]bool{}
	for _, p := range c.Ports {
		ports[p.Name] = true
	}
	for _, p := range svc.Spec.Ports {
		if !ports[p.TargetPort.String()] {
			t.Errorf("Service port %s targets %q, which the container does not name", p.Name, p.TargetPort.String())
		}
	}
	for what, pr := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if pr == nil || pr.HTTPGet == nil {
			t.Errorf("%s probe: want an httpGet probe", what)
			continue
		}
		want := "/healthz"
		if what == "readiness" {
			want = "/readyz"
		}
		if pr.HTTPGet.Path != want || !ports[pr.HTTPGet.Port.String()] {
			t.Errorf("%s probe gets %s on %s, want %s on a named container port", what, pr.HTTPGet.Path, pr.HTTPGet.Port.String(), want)
		}
	}

	// Every OCR_ variable must be a setting: docs/configuration.md's table is generated from
	// the settings table (cmd/ocrdraft TestDocs).
	conf, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
		if strings.HasPrefix(e.Name, "OCR_") && !bytes.Contains(conf, []byte("| `"+e.Name+"`")) {
			t.Errorf("env %s is not a setting in docs/configuration.md", e.Name)
		}
	}
	// The command the container runs is the image's entrypoint (ocrdraft serve) or its own
	// command, then its args: serve takes flags only, and a stray argument stops it at start.
	cmd := c.Command
	if len(cmd) == 0 {
		cmd = dockerEntrypoint(t)
	}
	cmd = append(slices.Clone(cmd), c.Args...)
	if len(cmd) < 2 || cmd[1] != "serve" {
		t.Errorf("the container runs %q, want ocrdraft serve", cmd)
	}
	for _, a := range cmd[min(2, len(cmd)):] {
		if !strings.HasPrefix(a, "-") {
			t.Errorf("the container runs %q: %q is not a flag, and serve takes flags only", cmd, a)
		}
	}

	// /metrics on a listener of its own: the container names its port, the scrape annotation
	// points at it, and the Service that callers reach does not.
	if ma, ok := env["OCR_METRICS_ADDR"]; ok {
		_, port, err := net.SplitHostPort(ma)
		if err != nil {
			t.Fatalf("OCR_METRICS_ADDR %q: %v", ma, err)
		}
		var named string
		for _, p := range c.Ports {
			if strconv.Itoa(int(p.ContainerPort)) == port {
				named = p.Name
			}
		}
		if named == "" {
			t.Errorf("no container port is OCR_METRICS_ADDR's %s", port)
		}
		if a := dep.Spec.Template.Annotations["prometheus.io/port"]; a != port {
			t.Errorf("prometheus.io/port %q, want OCR_METRICS_ADDR's %s", a, port)
		}
		for _, p := range svc.Spec.Ports {
			if p.TargetPort.String() == named || p.TargetPort.String() == port {
				t.Errorf("Service port %s exposes /metrics to callers", p.Name)
			}
		}
	}

	limit := c.Resources.Limits[corev1.ResourceMemory]
	gml, err := resource.ParseQuantity(strings.TrimSuffix(env["GOMEMLIMIT"], "B"))
	if err != nil || gml.Cmp(limit) >= 0 {
		t.Errorf("GOMEMLIMIT %q must be set below the memory limit %s", env["GOMEMLIMIT"], limit.String())
	}
	shutdown, err := time.ParseDuration(env["OCR_SHUTDOWN_TIMEOUT"])
	if err != nil {
		t.Fatalf("OCR_SHUTDOWN_TIMEOUT: %v", err)
	}
	pause := time.Duration(0)
	if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
		pause = time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	}
	if g := time.Duration(*dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second; g <= shutdown+pause {
		t.Errorf("terminationGracePeriodSeconds %v must exceed OCR_SHUTDOWN_TIMEOUT %v plus the preStop pause %v", g, shutdown, pause)
	}

	// The autoscaler's metric is one the service exports, and its queue the jobs' pages, read
	// with the Deployment's own database URL.
	families, err := metrics.New().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	exported := map[string]bool{}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	kinds := map[string]bool{}
	for _, tr := range so.Spec.Triggers {
		kinds[tr.Type] = true
		switch tr.Type {
		case "prometheus":
			name := strings.TrimSuffix(strings.TrimPrefix(tr.Metadata["query"], "sum("), ")")
			if !exported[name] {
				t.Errorf("the prometheus trigger's metric %s is not one the service exports", name)
			}
		case "postgresql":
			if _, ok := env[tr.Metadata["connectionFromEnv"]]; !ok || tr.Metadata["connectionFromEnv"] != "OCR_JOBS_DATABASE_URL" {
				t.Errorf("the postgresql trigger connects with %q, want the container's OCR_JOBS_DATABASE_URL", tr.Metadata["connectionFromEnv"])
			}
			if q := tr.Metadata["query"]; !strings.Contains(q, "river_job") || !strings.Contains(q, "'"+jobs.PagesQueue+"'") {
				t.Errorf("the postgresql trigger counts %q, not the jobs' pages (%s)", q, jobs.PagesQueue)
			}
			if n, err := strconv.Atoi(tr.Metadata["targetQueryValue"]); err != nil || strconv.Itoa(n) != env["OCR_JOB_CONCURRENCY"] {
				t.Errorf("targetQueryValue %q, want OCR_JOB_CONCURRENCY's %q pages a pod", tr.Metadata["targetQueryValue"], env["OCR_JOB_CONCURRENCY"])
			}
		default:
			t.Errorf("unexpected trigger %s", tr.Type)
		}
	}
	if !kinds["prometheus"] || !kinds["postgresql"] {
		t.Errorf("triggers %v, want prometheus (requests in flight) and postgresql (pages queued)", kinds)
	}
	if so.Spec.MinReplicaCount == nil || *so.Spec.MinReplicaCount != *dep.Spec.Replicas {
		t.Errorf("minReplicaCount %v, want the Deployment's %d replicas", so.Spec.MinReplicaCount, *dep.Spec.Replicas)
	}
}

// scaledObject is the part of KEDA's ScaledObject (keda.sh/v1alpha1) the example uses, decoded
// strictly as the Kubernetes types are: a mistyped field fails. KEDA's own Go module would
// bring half of Kubernetes' controllers with it.
type scaledObject struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		ScaleTargetRef struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Name       string `json:"name"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		PollingInterval *int32 `json:"pollingInterval"`
		CooldownPeriod  *int32 `json:"cooldownPeriod"`
		Triggers        []struct {
			Type     string            `json:"type"`
			Metadata map[string]string `json:"metadata"`
		} `json:"triggers"`
	} `json:"spec"`
}

// TestDockerfile: the image's HEALTHCHECK is the binary's own healthcheck (distroless has no shell
// or curl), it asks the port the image listens on, the version build arguments reach the
// variables internal/version reads, and the embedded libraries' notices are in the image, from
// files that exist.
func TestDockerfile(t *testing.T) {
	src, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := strings.ReplaceAll(string(src), "\\\n", " ")
	for _, want := range []string{
		`HEALTHCHECK `,
		`CMD ["/usr/local/bin/ocrdraft", "healthcheck"]`,
		`ENTRYPOINT ["/usr/local/bin/ocrdraft", "serve"]`,
		`-X github.com/ocrdraft/ocrdraft/internal/version.version=${VERSION}`,
		`-X github.com/ocrdraft/ocrdraft/internal/version.revision=${REVISION}`,
		`COPY --from=build /out/licenses /usr/share/doc/ocrdraft`,
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %s", want)
		}
	}
	listen := regexp.MustCompile(`(?m)^ENV OCR_LISTEN_ADDR=:(\d+)$`).FindStringSubmatch(df)
	if listen == nil || !strings.Contains(df, "\nEXPOSE "+listen[1]+"\n") {
		t.Errorf("Dockerfile: want ENV OCR_LISTEN_ADDR=:PORT and EXPOSE PORT, the port healthcheck asks")
	}
	for _, f := range []string{"../intake/sandbox/COPYRIGHT.wqy-microhei", "../intake/sandbox/LICENSE.Apache-2.0"} {
		if _, err := os.Stat(f); err != nil || !strings.Contains(df, strings.TrimPrefix(f, "../")) {
			t.Errorf("Dockerfile: the notice %s is not copied, or does not exist (%v)", f, err)
		}
	}
	v, err := os.ReadFile("../internal/version/version.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(v, []byte("\nvar version, revision string\n")) {
		t.Error("internal/version no longer has the variables the Dockerfile sets with -X")
	}
}

// dockerEntrypoint is the Dockerfile's ENTRYPOINT, in its exec form.
func dockerEntrypoint(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENTRYPOINT (\[.*\])$`).FindSubmatch(src)
	var ep []string
	if m == nil || json.Unmarshal(m[1], &ep) != nil {
		t.Fatal("the Dockerfile has no ENTRYPOINT in exec form")
	}
	return ep
}
