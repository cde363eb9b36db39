package server

import (
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ocrdraft/ocrdraft/problem"
	"github.com/ocrdraft/ocrdraft/schema"
)

// Keys for what handlers leave in the echo context for the request's log line. Only counts,
// names and codes go there: never an image, a prompt, a reply or a draft value.
const (
	ctxMeta       = "ocrdraft.meta"
	ctxPages      = "ocrdraft.pages"
	ctxIndicators = "ocrdraft.indicators"
	ctxCode       = "ocrdraft.code"
	ctxUpstream   = "ocrdraft.upstream" // the *problem.Upstream of a failed model call
	ctxBody       = "ocrdraft.body"     // the *body under guardBody
)

// logRequests writes one line per request and records it in the metrics. It renders a handler's
// error first, so the line has the status the caller got.
func (s *Server) logRequests(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		start := time.Now()
		if err := next(c); err != nil {
			c.Error(err)
		}
		attrs := []slog.Attr{
			slog.String("requestId", requestID(c)),
			slog.String("method", logToken(c.Request().Method)),
			slog.String("route", c.Path()),
			slog.Int("status", c.Response().Status),
			slog.Float64("durationMs", float64(time.Since(start).Microseconds())/1000),
		}
		if n, ok := c.Get(ctxPages).(int); ok {
			attrs = append(attrs, slog.Int("pages", n))
		}
		if n, ok := c.Get(ctxIndicators).(int); ok {
			attrs = append(attrs, slog.Int("indicators", n))
		}
		if m, ok := c.Get(ctxMeta).(*schema.Meta); ok {
			attrs = append(attrs,
				slog.String("model", s.cfg.ModelName),
				slog.Int("attempts", m.Attempts),
				slog.Int("promptTokens", m.Usage.PromptTokens),
				slog.Int("completionTokens", m.Usage.CompletionTokens))
		}
		if u, ok := c.Get(ctxUpstream).(*problem.Upstream); ok {
			// What the model endpoint said, for the operator: its status, and its error's type
			// and code, or our words for an answer that was none (vision builds it); never
			// its error message, which may quote the request, and the request is the report.
			attrs = append(attrs, slog.String("model", s.cfg.ModelName))
			if u.Status != 0 {
				attrs = append(attrs, slog.Int("upstreamStatus", u.Status))
			}
			for _, a := range [...]struct{ k, v string }{{"upstreamType", u.Type}, {"upstreamCode", u.Code}, {"upstreamReason", u.Reason}} {
				if a.v != "" {
					attrs = append(attrs, slog.String(a.k, a.v))
				}
			}
		}
		level := slog.LevelInfo
		if code, ok := c.Get(ctxCode).(problem.Code); ok {
			attrs = append(attrs, slog.String("code", string(code)))
			if problem.Lookup(code).Status >= 500 {
				level = slog.LevelWarn
			}
		}
		s.cfg.Logger.LogAttrs(c.Request().Context(), level, "request", attrs...)
		s.cfg.Metrics.Request(c.Path(), c.Request().Method, c.Response().Status, time.Since(start))
		return nil
	}
}
