package server_test

import (
	"fmt"
	"strings"
)

// metric is the value of one series of the env's registry, by its family's name and its label
// pairs; for a histogram (or a summary) it is the count of observations, which /metrics writes
// as name_count. A series that is not there fails the test. It reads the gathered families, as
// prometheus' testutil does: testutil.ToFloat64 needs the collector itself, which the metrics
// package keeps, and its Compare functions need the whole family, help and buckets included.
func (e *env) metric(name string, labels ...string) float64 {
	e.t.Helper()
	v, err := e.lookup(name, labels...)
	if err != nil {
		e.t.Fatal(err)
	}
	return v
}

// lookup is metric's search, for a wait that polls until a series appears.
func (e *env) lookup(name string, labels ...string) (float64, error) {
	families, err := e.metrics.Registry().Gather()
	if err != nil {
		return 0, err
	}
	want := map[string]string{}
	for i := 0; i+1 < len(labels); i += 2 {
		want[labels[i]] = labels[i+1]
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !sameLabels(m.GetLabel(), want) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue(), nil
			case m.Gauge != nil:
				return m.Gauge.GetValue(), nil
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount()), nil
			case m.Summary != nil:
				return float64(m.Summary.GetSampleCount()), nil
			case m.Untyped != nil:
				return m.Untyped.GetValue(), nil
			}
		}
		return 0, fmt.Errorf("no series %s{%s}", name, strings.Join(labels, ","))
	}
	return 0, fmt.Errorf("no metric family %s", name)
}

// sameLabels says whether a series' label pairs are exactly want.
func sameLabels[L interface {
	GetName() string
	GetValue() string
}](got []L, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

// metricIs says whether the series is there with the value want: a condition to wait for.
func (e *env) metricIs(want float64, name string, labels ...string) func() bool {
	return func() bool {
		v, err := e.lookup(name, labels...)
		return err == nil && v == want
	}
}

// series is one expected sample: its value, family name and label pairs.
type series struct {
	want   float64
	name   string
	labels []string
}

func (s series) check(e *env) {
	e.t.Helper()
	if got := e.metric(s.name, s.labels...); got != s.want {
		e.t.Errorf("%s{%s} = %v, want %v", s.name, strings.Join(s.labels, ","), got, s.want)
	}
}
